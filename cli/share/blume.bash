# SPDX-License-Identifier: Apache-2.0
# bash completion for blume. It reads the tool's own --help, so it stays true as options change.
_blume() {
  local cur prev words cword
  _init_completion 2>/dev/null || {
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  }
  local tool=${words[0]} sub="" i
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      -*) ;;
      *) sub=${words[i]}; break ;;
    esac
  done
  if [[ -z $sub ]]; then
    local subs
    subs=$("$tool" --help 2>/dev/null | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}')
    COMPREPLY=($(compgen -W "$subs --help --version" -- "$cur"))
    return
  fi
  case $prev in
    --kind)
      local kinds
      kinds=$("$tool" "$sub" --help 2>/dev/null | sed -n 's/.*filter kind: \([a-z0-9, -]*\).*/\1/p' | head -1 | tr -d ',')
      COMPREPLY=($(compgen -W "$kinds" -- "$cur"))
      return ;;
    --format)
      COMPREPLY=($(compgen -W "lines nul" -- "$cur"))
      return ;;
    --input | --output | --included | --excluded)
      COMPREPLY=($(compgen -f -- "$cur"))
      return ;;
  esac
  if [[ $cur == -* ]]; then
    local opts
    opts=$("$tool" "$sub" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*|(^| )-[a-z]\b' | sort -u)
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _blume blume
