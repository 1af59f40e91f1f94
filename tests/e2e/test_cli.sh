# The command line: probe, refusal, errors, clean-up.

test_cli_probe_passes_here() {
	"$PYSB" probe >"$T/out" 2>&1
	RC=$?
	expect_rc 0
	expect_grep "$T/out" "^ok +bpf in LSM list"
	expect_grep "$T/out" "^ok +LSM programs load"
}

test_cli_missing_policy_is_125_and_runs_nothing() {
	echo 'open("/tmp/ran", "w")' >"$T/app.py"
	run_sb "$T/nope" "$T/app.py"
	expect_rc 125
	[ ! -e /tmp/ran ] || fail "the program ran without a policy"
}

test_cli_no_cgroup_left_behind() {
	printf 'expose-ro=%s\n' "$T" >"$T/policy"
	# A background child that would outlive the program is killed with the cgroup.
	printf '%s\n' "import subprocess" "subprocess.Popen(['/usr/bin/sleep', '60'])" >"$T/app.py"
	printf 'expose-ro=/usr/bin\npython-api=ALLOW:process-exec\n' >>"$T/policy"
	run_sb "$T/policy" "$T/app.py"
	expect_rc 0
	[ -z "$(ls -d /sys/fs/cgroup/pysb-bpf/run-* 2>/dev/null)" ] || fail "cgroup left behind"
	! pgrep -x sleep >/dev/null || fail "a sandboxed child survived the sandbox"
}
