# Thin wrapper over meson; see README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build

.PHONY: all deps build check demo bench fuzz install deb clean

all: build

deps:
	@sh scripts/install-deps.sh

$(BUILD)/build.ninja:
	@sh scripts/install-deps.sh
	meson setup $(BUILD) --prefix=$(PREFIX)

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

check:
	@sh scripts/check.sh

demo: deps build
	@sh scripts/demo.sh

# make fuzz SECONDS=N: every fuzz target N seconds (default 60)
SECONDS ?= 60
fuzz:
	@SECONDS=$(SECONDS) sh scripts/fuzz.sh

bench: build
	bench/record-overhead
	bench/coldstart

install: $(BUILD)/build.ninja
	meson configure $(BUILD) --prefix=$(PREFIX) >/dev/null
	ninja -C $(BUILD)
	DESTDIR=$(DESTDIR) meson install -C $(BUILD) --no-rebuild

# the Debian package, built with Debian's tools; prints its path
deb:
	@BUILD=$(BUILD) sh scripts/deb.sh

clean:
	rm -rf $(BUILD) build-asan build-fuzz
