# Writes memloupe.1 (roff) from the built CLI's --help texts:
#   cmake -DMEMLOUPE=path/to/memloupe -DOUTPUT=memloupe.1 -DVERSION=x.y.z -P man_page.cmake
# Decision: generated rather than written by hand, so the page lists exactly the
# commands and options the binary has; each command's help goes in verbatim
# (preformatted), which `man` renders as the terminal shows it.

# Help text -> roff lines: the binary's path becomes "memloupe", backslashes are
# escaped, and a line starting with . or ' is kept from being read as a request.
function(help_to_roff text out)
  string(REPLACE "${MEMLOUPE}" "memloupe" text "${text}")
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(run_help out)
  execute_process(COMMAND ${MEMLOUPE} ${ARGN} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "memloupe ${ARGN} --help failed (${rc})")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

run_help(top)
# The subcommands: the lines of the "Subcommands:" section, "  name   description".
string(REGEX REPLACE ".*\nSubcommands:\n" "" listing "${top}")
string(REGEX MATCHALL "(^|\n)  [a-z][a-z-]*" names "${listing}")

help_to_roff("${top}" top_roff)
set(page ".TH MEMLOUPE 1 \"\" \"memloupe ${VERSION}\" \"User Commands\"
.SH NAME
memloupe \\- a sampling memory profiler for native Linux programs
.SH SYNOPSIS
.B memloupe
.I COMMAND
[\\fIOPTIONS\\fR] [\\fIARGS\\fR...]
.SH DESCRIPTION
memloupe records where a program allocates memory, how much of it stays and for
how long, into a compact self-contained trace, and answers questions about it.
.PP
.nf
${top_roff}.fi
.SH COMMANDS
")
foreach(entry ${names})
  string(STRIP "${entry}" name)
  run_help(help ${name})
  help_to_roff("${help}" help_roff)
  string(APPEND page ".SS ${name}\n.nf\n${help_roff}.fi\n")
endforeach()
string(APPEND page ".SH ENVIRONMENT
The recorder (the preload library) is configured by MEMLOUPE_* variables
(MEMLOUPE_OUTPUT, MEMLOUPE_MODE, MEMLOUPE_EVERY, MEMLOUPE_DEPTH, ...), so it
also works without the launcher; docs/RECORDER.md lists them all.
MEMLOUPE_PRELOAD, MEMLOUPE_ATTACH_LIBRARY and MEMLOUPE_REPLAYER override where
memloupe looks for its companion files.
.SH EXIT STATUS
run exits with the program's status; a bad command line exits 1; see
docs/RUNNING.md and docs/ATTACH.md for the others.
.SH SEE ALSO
.BR heaptrack (1),
.BR valgrind (1)
")
file(WRITE "${OUTPUT}" "${page}")
