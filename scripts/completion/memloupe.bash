# bash completion for memloupe (installed as
# share/bash-completion/completions/memloupe). The commands and options are read
# from memloupe's own --help when completing, so this file never lists them.

# The commands: the "Subcommands:" section of `memloupe --help`.
_memloupe_commands() {
  "$1" --help 2>/dev/null | sed -n '/^Subcommands:/,$ s/^  \([a-z][a-z-]*\) .*/\1/p'
}

# A command's options: the option lines of `memloupe CMD --help` ("  -o,--output TEXT ...").
_memloupe_options() {
  "$1" "$2" --help 2>/dev/null | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n'
}

_memloupe() {
  local cur=${COMP_WORDS[COMP_CWORD]} self=${COMP_WORDS[0]} cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --)
        # `memloupe run [options] -- PROGRAM ARGS...`: complete the program's command line.
        if ((i + 1 == COMP_CWORD)); then
          COMPREPLY=($(compgen -c -- "$cur"))
        else
          COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return 0
        ;;
      -*) ;;
      *) [[ -z $cmd ]] && cmd=${COMP_WORDS[i]} ;;
    esac
  done
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$(_memloupe_commands "$self")" -- "$cur"))
    fi
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_memloupe_options "$self" "$cmd")" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))  # traces, programs, PIDs typed by hand
  fi
}
complete -o filenames -F _memloupe memloupe
