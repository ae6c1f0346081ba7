# Makefile - thin wrapper over CMake. `make demo` and `make test` are the two README commands.
PREFIX ?= /usr/local
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all build deps demo test unit asan bench install clean fuzz

all: build

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

deps:
	bash scripts/deps.sh

# The demo needs only the build dependencies (scripts/deps.sh demo: no Python, npm or network; its
# model is written by the build's scripts/demo_model), builds quietly (the log stays in
# $(BUILD)/demo-build.log) and prints a summary table at the end. It fails (exit 1) if sunny-run is not
# token-exact with llama.cpp's recorded output for the demo model (scripts/demo_check.sh).
demo:
	@bash scripts/deps.sh demo
	@echo "building sunny into $(BUILD)/ (log: $(BUILD)/demo-build.log) ..."
	@mkdir -p $(BUILD)
	@{ cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) && \
	   cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory; } >$(BUILD)/demo-build.log 2>&1 || \
	   { tail -30 $(BUILD)/demo-build.log; echo "build failed (full log: $(BUILD)/demo-build.log)"; exit 1; }
	@echo "ok: built"
	@bash scripts/demo.sh $(BUILD)

# The whole suite: dependencies, a -Werror build, the unit and integration tests, then the unit
# tests again under ASan/UBSan. Ends with "N passed, N failed".
test: deps
	bash scripts/test.sh

# Every libFuzzer harness of tests/fuzz/ (clang, ASan + UBSan) for FUZZ_SECONDS each from its seed
# corpus; findings stay under $(BUILD)/fuzz/NAME. Stops at the first crash, leak or timeout.
FUZZ_SECONDS ?= 60
FUZZERS ?= torch_zip pickle gguf safetensors hf_config blob spm ollama_host tokenizer_json shard_index rwkv_vocab \
           ollama_reply lmstudio_files tok_encode lmstudio_reply
fuzz: build
	@for f in $(FUZZERS); do bash tests/fuzz/run_fuzz.sh $$f $(FUZZ_SECONDS) $(BUILD) || exit 1; done

unit: build
	cd $(BUILD) && ctest -L unit --output-on-failure

asan:
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DSN_SANITIZE=ON -DSN_WERROR=ON
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ctest -L unit --output-on-failure

bench: deps build
	bash bench/run_all.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-test
