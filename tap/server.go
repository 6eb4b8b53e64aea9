package tap

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// A server is the process a tap runs and the pipes of its stdio: the
// tap's ends, and the child's until it has started.
type server struct {
	cmd              *exec.Cmd
	stdinR, stdinW   *os.File
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
	reaped           chan struct{} // closed once the server has been waited for
	idle             atomic.Int64  // with Drain, once the server has exited: how long a read of its output may wait
}

func (s *server) closeAll() {
	for _, f := range []*os.File{s.stdinR, s.stdinW, s.stdoutR, s.stdoutW, s.stderrR, s.stderrW} {
		f.Close()
	}
}

// closeChildEnds closes the tap's copies of the server's ends of its
// pipes, once it has started with them.
func (s *server) closeChildEnds() {
	s.stdinR.Close()
	s.stdoutW.Close()
	s.stderrW.Close()
}

// spawn starts the server, with pipes for its stdio. A signal that came
// before it ends the session unstarted: spawn then returns no server,
// and the session's result.
func (t *Tap) spawn(sigs <-chan os.Signal) (*server, Result, error) {
	opts := t.opts
	cmd := exec.Command(serverPath(opts.Argv[0]), opts.Argv[1:]...)
	cmd.Args[0] = opts.Argv[0]
	cmd.Env = opts.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithTap(cmd.SysProcAttr)
	s := &server{cmd: cmd, reaped: make(chan struct{})}
	var err error
	if s.stdinR, s.stdinW, err = os.Pipe(); err != nil {
		return nil, Result{}, err
	}
	if s.stdoutR, s.stdoutW, err = os.Pipe(); err != nil {
		return nil, Result{}, err
	}
	if s.stderrR, s.stderrW, err = os.Pipe(); err != nil {
		return nil, Result{}, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.stdinR, s.stdoutW, s.stderrW
	select {
	case sig := <-sigs:
		s.closeAll()
		res, err := t.endUnstarted(sig.(syscall.Signal))
		return nil, res, err
	default:
	}
	if err := startServer(cmd, s.reaped); err != nil {
		s.closeAll()
		name := t.redact.MaskString(opts.Argv[0])
		return nil, Result{ExitCode: 127}, fmt.Errorf("cannot start %s: %w%s", name, unwrapExec(err), startHint(cmd.Path, name, err))
	}
	t.cmd = cmd
	growPipe(s.stdinW)
	growPipe(s.stdoutR)
	return s, Result{}, nil
}

// startServer starts cmd from a thread of its own that lives until
// reaped is closed (the server has been waited for): the kernel's signal
// to the server when the tap dies (dieWithTap) comes when the thread that
// started it ends, and the runtime ends a thread whose goroutine locked
// it and returned (a view's indexing in the same process does).
func startServer(cmd *exec.Cmd, reaped <-chan struct{}) error {
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			<-reaped
		}
		runtime.UnlockOSThread()
	}()
	return <-started
}

// finish records the session's exit and closes the recorder and the hub.
func (t *Tap) finish(res Result) {
	ev := sessions.EventRecord{Kind: sessions.EventExit, Signal: res.Signal}
	code := res.ExitCode
	ev.Code = &code
	t.rec.note(item{at: now(), event: &ev})
	t.rec.close()
	<-t.recDone
	t.hub.close()
}

// endUnstarted ends a session that a signal ended before its server was
// started: the session file says so, and the tap ends with 128+signal.
func (t *Tap) endUnstarted(sig syscall.Signal) (Result, error) {
	if err := t.startRecorder(t.redact); err != nil {
		t.opts.Warn(err.Error())
	}
	res := Result{ExitCode: 128 + int(sig), Signal: signalName(sig), Path: t.path}
	t.finish(res)
	return res, nil
}

// escalate returns a channel that delivers sig after d.
func (t *Tap) escalate(d time.Duration, sig syscall.Signal) <-chan syscall.Signal {
	c := make(chan syscall.Signal, 1)
	time.AfterFunc(d, func() { c <- sig })
	return c
}

// signalServer sends sig to the server's process group, so children that
// hold its pipes hear it too.
func (t *Tap) signalServer(sig syscall.Signal) {
	if t.cmd == nil || t.cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-t.cmd.Process.Pid, sig); err != nil {
		t.cmd.Process.Signal(sig)
	}
}

func exitStatus(cmd *exec.Cmd, err error) (int, string) {
	st := cmd.ProcessState
	if st == nil {
		return 1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), signalName(ws.Signal())
	}
	return st.ExitCode(), ""
}

// SignalName is the name a session file's exit record gives a signal.
func SignalName(s syscall.Signal) string { return signalName(s) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// serverPath finds a command given by name alone as execvp does: when
// PATH is unset (a host may start the tap with an empty environment), in
// the default path.
func serverPath(name string) string {
	if strings.Contains(name, "/") || os.Getenv("PATH") != "" {
		return name
	}
	for _, dir := range []string{"/bin", "/usr/bin"} {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p
		}
	}
	return name
}

// startHint says why a server's command that exists could not start, and
// what to do: a directory is no program; a file that is not executable
// wants chmod +x (name is the command as the user wrote it, masked).
func startHint(path, name string, err error) string {
	if !errors.Is(err, os.ErrPermission) {
		return ""
	}
	fi, serr := os.Stat(path)
	switch {
	case serr != nil:
		return ""
	case fi.IsDir():
		return " (it is a directory, not a program)"
	case fi.Mode()&0o111 == 0:
		return " (it is not executable: chmod +x " + name + ")"
	}
	return ""
}

// unwrapExec is why the server could not start, without its command:
// the caller names it, masked.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
