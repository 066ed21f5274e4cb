// Package shell decides what a bash command line would run and how much
// permission it needs, before it runs.
//
// # Parsing
//
// [Parse] splits any bash input into the simple commands it would execute,
// recursively: lists, pipelines, subshells, groups, control-flow bodies and
// conditions, function bodies, command and process substitutions
// (arithmetic and [[ ]] included), the scripts given to shells, eval,
// su -c, trap, watch and here-documents fed to a shell, the commands run
// by xargs and find -exec, and the commands behind wrappers. Each [Command]
// carries its name and arguments after quote removal, the environment
// assignments and redirections around it, the chain of wrappers it was
// found in, the directories it may run in after a cd, and whether anything
// about it is dynamic: known only when it runs ($X, $(...) or a glob as the
// command name, eval or bash -c of computed text, brace expansion in the
// name, LD_PRELOAD or PATH set, an unknown wrapper option, a script string
// that does not parse or is nested more than 16 deep).
//
// Wrappers seen through (the wrapped command is recorded with the wrapper
// in its chain):
//
//	argument vectors  sudo doas pkexec runuser env nohup nice ionice timeout
//	                  time command builtin exec stdbuf setsid chroot unbuffer
//	                  taskset chrt flock strace fakeroot busybox xargs
//	                  nsenter unshare setpriv firejail proxychains torsocks
//	                  xvfb-run dbus-run-session ssh-agent valgrind catchsegv
//	                  faketime
//	                  find -exec/-execdir/-ok/-okdir, uv/poetry/pipenv/pdm/
//	                  rye/hatch run, bundle exec, conda/mamba/micromamba run,
//	                  pnpm/yarn exec, direnv exec, mise exec -- , eval of
//	                  plain words
//	script strings    bash sh zsh dash ksh mksh ash yash posh fish rbash -c,
//	                  a shell or source reading a here-document or
//	                  here-string (also as /dev/stdin), eval, su -c,
//	                  runuser -c, sg, flock -c, script -c, trap, watch
//	                  (without -x), npx -c, npm exec -c
//
// Not wrappers: npx, pnpm dlx, bunx and yarn dlx run a package, not a
// command; ssh, docker exec and kubectl exec run commands elsewhere.
//
// # Rules
//
// [ParsePattern] reads Claude Code's Bash rule specifiers; see [Pattern]
// for the matching semantics. [Patterns.Match] is how deny and ask rules
// apply: any simple command matches, seen through quotes, paths, wrappers
// and nesting. [Patterns.Allow] is how allow rules apply: the input parses,
// nothing is dynamic, and every simple command is matched — through the
// wrappers that change nothing (timeout, nice, env, xargs, bash -c, ...)
// or together with the ones that do (sudo, su, chroot, ...).
//
// # Classification
//
// [Classify] computes the [Level] a script requires — ReadOnly,
// WorkspaceWrite or DangerFullAccess — with a [Finding] for every reason it
// is above ReadOnly. Unknown commands are WorkspaceWrite. Writes, deletes
// and links are resolved against the working directory (and the
// directories an earlier cd may have moved to), ~ and $HOME against the
// home directory, and compared with the workspace after cleaning; a target
// known only at run time is DangerFullAccess. It enforces nothing by
// itself: the policy package turns the level and the rule outcomes into a
// decision, and the sandbox enforces what an approved command can touch.
//
// The package does no I/O: paths are compared lexically (symbolic links are
// not followed), aliases and functions from the user's shell are unknown,
// and programs that run commands on their own (git aliases, make, npm
// scripts, awk's system, python's os.system) are judged by what they are,
// not by what they will run.
package shell
