# Documentation that cannot drift: every command README.md and docs/*.md show in a
# ```console block runs here, exactly as written, in one shell session per page, and must
# show the output and exit status the page shows (scripts/doc-examples: the markup, the
# matching, the setup/skip/xfail markers). One test per page that has such a block:
# test_docs_README, test_docs_docs_policy, ...; a new page or block is picked up by itself.

# _docs_page PAGE: runs PAGE's examples (relative to the repository) with build/ first on
# PATH, as `make install` would put pysb-bpf; its report goes to the test's log.
_docs_page() {
	(cd "$REPO" && scripts/doc-examples --bin build --dir "$T" "$1") >"$T/docs.out" 2>&1
	RC=$?
	cat "$T/docs.out"
	[ "$RC" -eq 0 ] || fail "$1: an example does not do what the page shows (above)"
}

for _p in "$REPO"/README.md "$REPO"/docs/*.md; do
	[[ $(<"$_p") == *'```console'* ]] || continue
	_p=${_p#"$REPO"/}
	_n=${_p%.md}
	# The pages' commands print what pysb-bpf prints, whatever the kernel: once per
	# matrix, except kernels.md, whose examples show what this kernel offers.
	_once='once_per_matrix "the page shows the command line, not the kernel";'
	[ "$_p" = docs/kernels.md ] && _once=
	eval "test_docs_${_n//[^A-Za-z0-9]/_}() { $_once _docs_page '$_p'; }"
done
unset _p _n _once
