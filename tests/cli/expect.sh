# Sourced by the CLI test scripts: `expect RC REGEX ARGS...` runs
# `$bin ARGS...` and wants exit code RC and REGEX (grep -E, line by line)
# in its output; it counts checks in $count and misses in $failed.
failed=0
count=0

expect() {
  local want_rc=$1 regex=$2
  shift 2
  count=$((count + 1))
  local out rc
  out=$(timeout 60 "$bin" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -qE -- "$regex" <<<"$out"; then
    failed=$((failed + 1))
    printf 'FAIL: switchyard %s\n  want exit %d and /%s/, got exit %d:\n%s\n' "$*" "$want_rc" "$regex" "$rc" \
      "$(tail -n 12 <<<"$out")"
  fi
}
