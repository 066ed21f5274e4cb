#!/bin/bash
# `make run`: one sandboxed command on the embedded default policy, in a
# throwaway workspace and home, showing what the sandbox allows and refuses.
set -u
cordon=$(realpath "${1:-bin/cordon}")
# Not under /tmp: the sandbox has a private /tmp of its own.
demo=$(mktemp -d /var/tmp/cordon-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir -p "$demo/home/.ssh" "$demo/workspace"
echo "not really a key" > "$demo/home/.ssh/id_ed25519"
chmod -R go-rwx "$demo/home/.ssh"
chmod 755 "$demo" "$demo/home" "$demo/workspace"

cd "$demo/workspace" || exit 1
echo "\$ cordon run -- bash -c '...'   (workspace $demo/workspace)"
HOME="$demo/home" "$cordon" run -- bash -c '
try() { printf "%-44s" "$1"; shift; if out=$("$@" 2>&1); then echo "ok ${out:+($out)}"; else echo "refused: ${out##*: }"; fi; }
try "write inside the workspace"    sh -c "echo hi > ./hello.txt && cat ./hello.txt"
try "write outside it (/etc)"       sh -c "echo x > /etc/cordon-demo"
try "write to the home directory"   sh -c "echo x > ~/.bashrc"
try "read ~/.ssh"                   cat ~/.ssh/id_ed25519
try "connect to 1.1.1.1:80"         bash -c "exec 3<>/dev/tcp/1.1.1.1/80"
try "count the processes it can see"  sh -c "ls -d /proc/[0-9]* | wc -l"
try "who am I"                      id -un
'
status=$?
echo "exit status $status; on the host, hello.txt is: $(cat "$demo/workspace/hello.txt" 2>/dev/null || echo missing)"
