// Package runtime executes a compiled sandbox spec on this machine, in
// process, through runc's libcontainer: it prepares the host side (state
// directory, the sandbox's root), starts the command with cordon's own init
// as the sandbox's first process, passes stdio or a pseudo-terminal through,
// forwards signals, and when the command ends removes every trace of the
// sandbox — also after a run that crashed. It is the only package that
// imports libcontainer's execution code.
//
// A program that calls Run must call Init first thing in main: libcontainer
// re-executes the program to set the sandbox up, and cordon's init runs from
// the same binary.
package runtime
