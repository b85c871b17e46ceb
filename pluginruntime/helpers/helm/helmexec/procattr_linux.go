package helmexec

import "syscall"

// childProcAttr kills the helper when its parent dies: a plugin killed
// mid-install must not leave a helper writing on under a lock the next
// instance already took over.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
