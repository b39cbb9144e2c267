#!/bin/sh
# keep against a real PostgreSQL (the reduced form of bench/keep, without
# timing): a small pgbench database on ext4 on a loop device, the server
# started in a memory cgroup where systemd would put its unit; a read-only
# load; keep save while it runs (as its timer does: what the server has
# open outside the kept path counts: a tablespace elsewhere) and after it stops (its
# ExecStopPost); the cache emptied; keep restore, run in that cgroup: every
# range of the snapshot resident again, no more read than it holds; the
# server starts on the restored cache and answers.
. "$(dirname "$0")/lib.sh"
need_root; need_loop; need_python
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/postgres" ] || skip "needs PostgreSQL (apt-get install postgresql)"
id postgres >/dev/null 2>&1 || skip "needs the postgres user (Debian's postgresql package makes it)"

UNIT=readset-e2e-pg-$$.service
if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
        CGTOP=/sys/fs/cgroup/memory; LIMIT=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        CGTOP=/sys/fs/cgroup; LIMIT=memory.max
else
        skip "needs a memory cgroup controller"
fi
SLICE_MADE=
[ -d "$CGTOP/system.slice" ] || { mkdir "$CGTOP/system.slice"; SLICE_MADE=1; }
if [ "$LIMIT" = memory.max ]; then
        echo +memory > "$CGTOP/cgroup.subtree_control" 2>/dev/null || true
        echo +memory > "$CGTOP/system.slice/cgroup.subtree_control" 2>/dev/null || true
fi
CG=$CGTOP/system.slice/$UNIT
mkdir "$CG"
# room for the database and for readset itself under a sanitizer (its
# memory is charged there too): the limit is not what is tested here
echo $((1 << 30)) > "$CG/$LIMIT"

PGDATA=
HOLDER=
pg_cleanup() {
        [ -z "$HOLDER" ] || kill "$HOLDER" 2>/dev/null || true
        [ -z "$PGDATA" ] || [ ! -f "$PGDATA/postmaster.pid" ] ||
                runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
        rmdir "$CG" 2>/dev/null || true
        [ -z "$SLICE_MADE" ] || rmdir "$CGTOP/system.slice" 2>/dev/null || true
        cleanup
}
trap pg_cleanup EXIT

# in the unit's cgroup, as postgres: how the unit would run the server
as_service() { sh -c 'echo $$ > "$0/cgroup.procs" && exec runuser -u postgres -- "$@"' "$CG" "$@"; }
pg() { runuser -u postgres -- "$@"; }
pg_start() { as_service "$PGBIN/pg_ctl" -D "$PGDATA" -l "$TMP/sock/log" -w -t 300 start >/dev/null || fail "postgres did not start: $(tail -5 "$TMP/sock/log")"; }
pg_stop() { pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 300 stop >/dev/null || fail "postgres did not stop"; }
PSQL="$PGBIN/psql -h $TMP/sock -p 5439 -U postgres -At"

make_ext4 512 128
chmod 755 "$TMP"
mkdir -p "$MNT/pg" "$TMP/sock" "$TMP/units"
chown postgres: "$MNT/pg" "$TMP/sock"
PGDATA=$MNT/pg/data
pg "$PGBIN/initdb" -D "$PGDATA" -A trust -U postgres >/dev/null || fail "initdb"
cat >> "$PGDATA/postgresql.conf" <<EOF
listen_addresses = ''
port = 5439
unix_socket_directories = '$TMP/sock'
shared_buffers = 16MB
autovacuum = off
fsync = off
EOF
pg_start
pg "$PGBIN/pgbench" -h "$TMP/sock" -p 5439 -U postgres -i -q -s 4 postgres >/dev/null 2>&1 || fail "pgbench -i"
printf '\\set aid permute(random_zipfian(1, 400000, 1.1), 400000) + 1\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n' > "$TMP/sock/select.sql"
chmod 644 "$TMP/sock/select.sql"
pg_stop
# from a cold cache: only what the load reads is cached
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
pg_start
pg "$PGBIN/pgbench" -h "$TMP/sock" -p 5439 -U postgres -n -f "$TMP/sock/select.sql" -c 4 -t 2000 \
        --random-seed=7 postgres >/dev/null 2>&1 || fail "the load"
# a table in a tablespace outside the data directory, held open by a
# session: the save finds it through the server's cgroup, not the path
mkdir "$MNT/pg/ts"
chown postgres: "$MNT/pg/ts"
$PSQL -c "CREATE TABLESPACE outside LOCATION '$MNT/pg/ts'" postgres >/dev/null || fail "create tablespace"
$PSQL -c "CREATE TABLE far TABLESPACE outside AS SELECT generate_series(1, 100000) AS n" postgres >/dev/null ||
        fail "a table in the tablespace"
$PSQL -c "SELECT count(*) FROM far" -c "SELECT pg_sleep(120)" postgres >/dev/null 2>&1 &
HOLDER=$!
wait_until 60 "ls -l /proc/*/fd/ 2>/dev/null | grep -q '$MNT/pg/ts/'" || fail "no backend holds the tablespace's table open"

K="$READSET keep --state $TMP/state --unit-dir $TMP/units"
printf '[Service]\nExecStart=/bin/true\n' > "$TMP/units/$UNIT"
# the kept path: the data directory; the tablespace the server has open
$K enable "$UNIT" "$PGDATA" 2>"$TMP/err" || fail "enable: $(cat "$TMP/err")"
$K save "$UNIT" 2>"$TMP/err" || fail "save while it runs: $(cat "$TMP/err")"
SNAP=$TMP/state/$UNIT.readset
json_check "$SNAP" "[p for p in files if p.startswith('$PGDATA/base/')]" || fail "nothing of the tables kept"
json_check "$SNAP" "[p for p in files if p.startswith('$MNT/pg/ts/')]" ||
        fail "the table the server has open outside the kept path (its cgroup's files) is not kept"
pg_stop
kill "$HOLDER" 2>/dev/null || true
wait "$HOLDER" 2>/dev/null || true
HOLDER=
$K save "$UNIT" 2>"$TMP/err" || fail "save at the stop: $(cat "$TMP/err")"
json_check "$SNAP" "[p for p in files if p.startswith('$MNT/pg/ts/')]" ||
        fail "the save at the stop lost what the server had open"
saved=$($K status --json "$UNIT" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)[0]["saved_bytes"])')
# the server's own memory, from the save while it ran (its 16 MB of shared
# buffers at least), is what a restore leaves it
own=$($K status --json "$UNIT" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)[0]["service_bytes"])')
[ "$own" -gt $((8 << 20)) ] || fail "the server's own memory seen as $own bytes"
[ "$saved" -gt $((1 << 20)) ] || fail "the save kept only $saved bytes"

restore() {
        unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
        sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" $K restore "$UNIT" 2>"$TMP/err" ||
                fail "restore: $(cat "$TMP/err")"
        set -- $(resident_ranges "$SNAP" "$MNT")
        MISSING=$2
}
restore
[ "$MISSING" = 0 ] || { echo "  again, from a cold start (DAMON, see replay.sh)"; restore; }
[ "$MISSING" = 0 ] || fail "$MISSING ranges of the snapshot not resident after restore: $(cat "$TMP/err")"
restored=$($K status --json "$UNIT" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)[0]["restored_bytes"])')
[ "$restored" -gt 0 ] && [ "$restored" -le $((1 << 30)) ] ||
        fail "the restore read $restored bytes (snapshot $saved, the cgroup holds 1 GiB)"

# the server starts on the restored cache, and its data are intact
pg_start
n=$($PSQL -c "SELECT count(*) FROM pgbench_accounts" postgres) || fail "a query after the restore"
[ "$n" = 400000 ] || fail "pgbench_accounts has $n rows after the restore"
pg_stop
$K disable "$UNIT" 2>/dev/null || fail "disable"
echo "keep-postgres: ok (saved $saved bytes, restored $restored)"
