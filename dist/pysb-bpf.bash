# bash completion for pysb-bpf                                 -*- shell-script -*-
# Installed by `make install` into share/bash-completion/completions/pysb-bpf.
# The commands and options come from the binary's own help (`pysb-bpf --help`, then
# `pysb-bpf CMD --help`, or the command's lines of the top-level help), read at each completion,
# so the completion knows what the installed binary knows. An option's argument completes by
# the word the help shows after it: FILE (or a name with a dot) files, DIR directories, USER
# users, PID process ids. Needs nothing from the bash-completion package.
# shellcheck disable=SC2207 # compgen output into COMPREPLY: the usual idiom, words without spaces

# _pysb_bpf_help [CMD]: the help text of pysb-bpf, or of CMD.
_pysb_bpf_help() {
	local bin=$1 cmd=${2:-} out top
	if [ -z "$cmd" ]; then
		out=$("$bin" --help 2>/dev/null) && [ -n "$out" ] || out=$("$bin" help 2>/dev/null)
		printf '%s\n' "$out"
		return
	fi
	top=$(_pysb_bpf_help "$bin")
	# Older binaries answer `CMD --help` with the top-level help, or not at all: then the
	# command's lines of the top-level help, up to the next command.
	if out=$("$bin" "$cmd" --help 2>/dev/null) && [ -n "$out" ] && [ "$out" != "$top" ]; then
		printf '%s\n' "$out"
		return
	fi
	printf '%s\n' "$top" | awk -v c="$cmd" '
		/^ ( |  |   )?[a-z][a-z-]*([ ,|]|$)/ { on = ($1 == c) }
		on'
}

# The commands: the indented words of the top-level help (those of 0.4 when it has none).
_pysb_bpf_commands() {
	local c
	c=$(_pysb_bpf_help "$1" | sed -n 's/^ \{1,4\}\([a-z][a-z-]*\)\([ ,|].*\)\{0,1\}$/\1/p' | sort -u)
	printf '%s\n' "${c:-run check probe learn attach diff daemon help version}"
}

# "OPTION KIND" lines for CMD: KIND is the word the help shows after the option (FILE, DIR,
# USER, PID...), "-" when it takes none.
_pysb_bpf_options() {
	_pysb_bpf_help "$1" "$2" | grep -oE -- '(^|[][ ,|(])--?[a-zA-Z][a-zA-Z0-9-]*(\[?[= ][A-Z][A-Za-z0-9_.|:-]*)?' |
		sed -E 's/^[][ ,|(]//; s/\[?[= ]/ /' | awk 'NF == 1 { $2 = "-" } !seen[$1]++' |
		grep -v '^--KEY '
}

_pysb_bpf() {
	local cur prev bin=${COMP_WORDS[0]} cmd='' i w kind
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	# An option written --opt=value: complete the value.
	if [[ $cur == --*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
	fi

	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		[[ $w == -* ]] && continue
		cmd=$w
		break
	done
	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--help --version' -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_pysb_bpf_commands "$bin")" -- "$cur"))
		fi
		return
	fi

	# run/attach: after `--` or the first non-option word, the program and its arguments.
	if [ "$cmd" = run ]; then
		for ((i = i + 1; i < COMP_CWORD; i++)); do
			w=${COMP_WORDS[i]}
			if [ "$w" = -- ]; then
				_pysb_bpf_program "$i"
				return
			fi
		done
	fi

	case $cmd in
	help)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$(_pysb_bpf_commands "$bin")" -- "$cur"))
		return
		;;
	esac

	# The argument of the option before the cursor (or after its `=`).
	if [[ $prev == -* ]]; then
		kind=$(_pysb_bpf_options "$bin" "$cmd" | awk -v o="$prev" '$1 == o { print $2 }')
		case $kind in
		"" | -) ;;
		DIR*) COMPREPLY=($(compgen -d -- "$cur")); return ;;
		USER*) COMPREPLY=($(compgen -u -- "$cur")); return ;;
		PID*)
			COMPREPLY=($(compgen -W "$(cd /proc 2>/dev/null && printf '%s\n' [0-9]*)" -- "$cur"))
			return
			;;
		FILE* | *.*) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
		*) return ;; # ADDR:PORT, N, SIZE: nothing to offer
		esac
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$( (_pysb_bpf_options "$bin" "$cmd" | awk '{ print $1 }'; echo --help) | sort -u)" -- "$cur"))
		return
	fi
	case $cmd in
	run) _pysb_bpf_program ;;
	*) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;
	esac
}

# The program to run: a command on PATH or a file (app.py, ./script).
_pysb_bpf_program() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	if [ "${1:-0}" -gt 0 ] && [ "$((COMP_CWORD - 1))" -gt "$1" ] || [[ $cur == */* ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	else
		COMPREPLY=($(compgen -c -- "$cur") $(compgen -f -- "$cur"))
	fi
	compopt -o filenames 2>/dev/null
}

complete -F _pysb_bpf pysb-bpf
