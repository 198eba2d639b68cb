# The README's two commands. Both install what is missing first (Debian/Ubuntu).
.PHONY: demo test deps build package screenshots sandbox-down typecheck-ui

demo: deps
	scripts/demo.sh

test: deps
	scripts/test.sh

deps:
	scripts/install-deps.sh

# Refreshes the README's screenshots (docs/screenshots/) from a run of the desktop e2e test;
# `make test` writes its photographs under target/screenshots/ and leaves the checkout clean.
screenshots: deps
	STOCKGUARD_WRITE_SCREENSHOTS=1 scripts/test.sh -p stockguard-desktop --test e2e

build: deps
	cargo build --workspace

# A .deb of the desktop app with the CLI beside it (release build), by the Tauri CLI that
# package-lock.json pins: scripts/package.sh, which prints the .deb's path. `make test` installs
# one of its own (the debug build) and removes it (tests/package/installed_app.sh).
package: deps
	scripts/package.sh

# The front end's type check alone (`make test` runs it too); needs only npm (`make deps`).
typecheck-ui:
	scripts/typecheck-ui.sh

# Stops the private servers `sandbox up` started (if any); machine services are left alone.
sandbox-down:
	cargo run --quiet -p stockguard -- sandbox down
	STOCKGUARD_SANDBOX_DIR=.sandbox/test cargo run --quiet -p stockguard -- sandbox down
