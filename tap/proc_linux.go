package tap

import "syscall"

// dieWithTap has the kernel kill the server with SIGKILL when the tap
// dies before it (SIGKILL, a crash): a server that does not read its
// stdin would otherwise run on with no one to stop it. The kernel does so
// when the thread that started the server ends, not the process: see
// startServer.
func dieWithTap(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
