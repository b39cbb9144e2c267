# Thin wrapper over meson; see README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build

.PHONY: all deps build check demo bench install clean

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

bench: build
	bench/record-overhead
	bench/coldstart

install: $(BUILD)/build.ninja
	meson configure $(BUILD) --prefix=$(PREFIX) >/dev/null
	ninja -C $(BUILD)
	DESTDIR=$(DESTDIR) meson install -C $(BUILD) --no-rebuild

clean:
	rm -rf $(BUILD) build-asan
