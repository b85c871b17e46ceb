//go:build !linux

package helmexec

import "syscall"

// childProcAttr has no parent-death signal outside Linux; plugins run on
// Linux, this only lets the package build on a developer's machine.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
