# The README's two commands. Both install what is missing first (Debian/Ubuntu).
.PHONY: demo test deps build sandbox-down

demo: deps
	scripts/demo.sh

test: deps
	scripts/test.sh

deps:
	scripts/install-deps.sh

build: deps
	cargo build --workspace

# Stops the private servers `sandbox up` started (if any); machine services are left alone.
sandbox-down:
	cargo run --quiet -p stockguard -- sandbox down
	STOCKGUARD_SANDBOX_DIR=.sandbox/test cargo run --quiet -p stockguard -- sandbox down
