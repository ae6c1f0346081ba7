#!/usr/bin/env bash
# test_install.sh - `make install` (cmake --install) into a scratch prefix installs the programs, the
# sn_abi.h header and the library it belongs to (libsunny.so + libsunny.a + sunny.pc); a client that
# includes only sn_abi.h (tests/tools/abi_smoke.c) compiles against the .pc, links shared and
# static, and generates the same tokens through both.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
W=$SN_WORK/install
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
P=$W/prefix
cmake --install "$SN_BUILD" --prefix "$P" >"$W/install.log" 2>&1 || { bad "cmake --install failed: $(tail -5 "$W/install.log")"; finish; }
for f in bin/sunny-run bin/sunny-convert bin/sunny-integrate include/sn_abi.h; do
  [[ -e $P/$f ]] && ok "installed $f" || bad "missing $P/$f"
done
lib=$(dirname "$(find "$P" -name sunny.pc | head -1)")
[[ -n $lib && -f $lib/sunny.pc ]] && ok "installed sunny.pc ($lib)" || { bad "no sunny.pc under $P"; finish; }
libdir=$(dirname "$lib")
[[ -f $libdir/libsunny.a && -e $libdir/libsunny.so ]] && ok "installed libsunny.a and libsunny.so" || bad "libraries missing in $libdir: $(ls "$libdir")"
export PKG_CONFIG_PATH=$lib
cc -std=c11 -Wall -Werror "$SN_SRC/tests/tools/abi_smoke.c" -o "$W/smoke-shared" $(pkg-config --cflags --libs sunny) 2>"$W/cc.err" &&
  ok "abi_smoke compiles and links against the .pc (shared)" || bad "shared build: $(cat "$W/cc.err")"
cc -std=c11 -Wall -Werror "$SN_SRC/tests/tools/abi_smoke.c" -o "$W/smoke-static" $(pkg-config --cflags sunny) \
  "$libdir/libsunny.a" $(pkg-config --static --libs sunny | sed 's/-lsunny//') 2>"$W/cc2.err" &&
  ok "abi_smoke links the static library (pkg-config --static)" || bad "static build: $(cat "$W/cc2.err")"
ldd "$W/smoke-static" 2>/dev/null | grep -q libsunny && bad "static build still needs libsunny.so" || ok "static build does not load libsunny.so"
G=$(rt_gguf llama3 1234) || { bad "fixture GGUF"; finish; }
a=$(LD_LIBRARY_PATH=$libdir "$W/smoke-shared" "$G" 1,450,4996 8 2>&1); ra=$?
b=$("$W/smoke-static" "$G" 1,450,4996 8 2>&1); rb=$?
want=$("$SN_BIN/sunny-run" "$G" --prompt-ids 1,450,4996 -n 8 --ignore-eos --json 2>/dev/null | sed -n 's/.*"ids":\(\[[0-9,]*\]\).*/\1/p')
[[ $ra == 0 && $rb == 0 && $a == "$b" ]] && grep -qF "\"ids\":$want" <<<"$a" &&
  ok "shared and static clients generate sunny-run's tokens $want" || bad "clients: shared rc=$ra $a / static rc=$rb $b / want $want"
finish
