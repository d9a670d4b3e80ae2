# bash completion for hvnoise(8): its commands, and each command's options
# as the command itself lists them (hvnoise COMMAND --help), so the two
# never disagree.  Installed to bash-completion's completions directory.

_hvnoise()
{
	local cur prev cmd words opts
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=${COMP_WORDS[1]}

	if [ "$COMP_CWORD" -eq 1 ]; then
		words="record flight-recorder report top status correlate exporter trigger incidents advise version help"
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return
	fi
	case $cmd in
	help)
		[ "$COMP_CWORD" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W \
			"record flight-recorder report top status correlate exporter trigger incidents advise" -- "$cur")
		return ;;
	version) return ;;
	esac
	case $prev in
	--source)
		mapfile -t COMPREPLY < <(compgen -W "module bpf kernel" -- "$cur")
		return ;;
	-o|--output|-i|--input|--nccl|--fr|--kineto|--inspector|--perfetto|--summary|--trigger-file|--bundle)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	-I|--interval)
		return ;;	# a time: nothing to offer
	esac
	if [[ $cur == -* ]]; then
		opts=$("${COMP_WORDS[0]}" "$cmd" --help 2>&1 |
			grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' | tr -d ' ,' | sort -u)
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return
	fi
	case $cmd in
	report|correlate|advise)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	esac
}
complete -o filenames -F _hvnoise hvnoise
