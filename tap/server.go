package tap

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

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
