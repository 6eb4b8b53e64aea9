package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rpctapWithUmask is rpctapIn under umask 077, as sudo may run it.
func rpctapWithUmask(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `umask 077 && exec "$0" "$@"`, rpctapBinary(t)}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "APPDATA=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func ownerAndMode(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("uid %d, gid %d, mode %04o", sys.Uid, sys.Gid, st.Mode().Perm())
}

func TestWrapAndUnwrapRunByRootLeaveTheConfigAndItsBackupTheirOwnersOwnerGroupAndMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can run rpctap on a config another user owns; run this test as root to check that the config stays its owner's")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "claude_desktop_config.json")
	orig := copySample(t, "claude_desktop_config.json", path)
	const uid, gid = 4242, 4243 // a user and group of no one in particular
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o664); err != nil {
		t.Fatal(err)
	}
	want := ownerAndMode(t, path)

	if _, errs, code := rpctapWithUmask(t, dir, "wrap", "claude-desktop", "everything", "--config", path, "--rpctap", "/opt/bin/rpctap"); code != 0 {
		t.Fatalf("wrap: exit %d: %s", code, errs)
	}
	for _, p := range []string{path, path + ".rpctap-backup"} {
		if got := ownerAndMode(t, p); got != want {
			t.Errorf("after wrap, %s has %s; want %s, as the config had", filepath.Base(p), got, want)
		}
	}
	if _, errs, code := rpctapWithUmask(t, dir, "unwrap", "claude-desktop", "everything", "--config", path); code != 0 {
		t.Fatalf("unwrap: exit %d: %s", code, errs)
	}
	if got := ownerAndMode(t, path); got != want {
		t.Errorf("after unwrap, the config has %s; want %s", got, want)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, orig) {
		t.Error("after unwrap the config is not what it was")
	}
}

func TestWrapRefusesAReadOnlyConfigAndSaysWhatToTypeToChangeItAnyway(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "Application Support", "Claude", "claude_desktop_config.json")
	orig := copySample(t, "claude_desktop_config.json", path)
	os.Chmod(path, 0o400)

	_, errs, code := rpctapIn(t, dir, "wrap", "claude-desktop", "everything", "--config", path, "--rpctap", "/opt/bin/rpctap")
	if code == 0 || !strings.Contains(errs, path+" is read-only (mode 0400), so rpctap left it as it is") {
		t.Fatalf("wrap of a read-only config: exit %d, said %q; want a refusal naming it read-only", code, errs)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, orig) {
		t.Fatal("the refused wrap changed the file")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o400 {
		t.Fatalf("the refused wrap changed the mode to %04o", st.Mode().Perm())
	}
	if _, err := os.Stat(path + ".rpctap-backup"); err == nil {
		t.Fatal("the refused wrap made a backup")
	}

	// What it says to type does it, and leaves the file read-only again.
	_, typed, ok := strings.Cut(strings.TrimSpace(errs), "type: ")
	if !ok {
		t.Fatalf("the refusal says nothing to type: %q", errs)
	}
	sh := exec.Command("sh", "-c", typed)
	sh.Dir = dir
	sh.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "APPDATA=")
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", typed, err, out)
	}
	now, _ := os.ReadFile(path)
	if !bytes.Contains(now, []byte(`"command": "/opt/bin/rpctap"`)) {
		t.Errorf("after %s the server is not wrapped:\n%s", typed, now)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o400 {
		t.Errorf("after %s the mode is %04o, want 0400 again", typed, st.Mode().Perm())
	}
}

// An editor saves the config over and over (a new file renamed over it,
// as vim does) while rpctap wraps it again and again. A save of the
// editor's is lost when rpctap puts in its place a file made from an
// older one: the file then holds an older save, and stays so.
func TestWrapNeverOverwritesAnEditorsSaveMadeWhileItWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "claude_desktop_config.json")
	sample := copySample(t, "claude_desktop_config.json", path)
	rpctapBinary(t) // built before the editor starts
	saved := func(k int) []byte {
		return bytes.Replace(sample, []byte("{\n"), []byte("{\n  \"editorSave\": "+strconv.Itoa(k)+",\n"), 1)
	}
	saveRE := regexp.MustCompile(`"editorSave": (\d+)`)
	savedAs := func() int {
		b, _ := os.ReadFile(path)
		m := saveRE.FindSubmatch(b)
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}

	stop, done := make(chan struct{}), make(chan struct{})
	saves, lost := 0, 0
	go func() {
		defer close(done)
		for k := 1; ; k++ {
			tmp := path + ".editor-save"
			if err := os.WriteFile(tmp, saved(k), 0o640); err != nil {
				panic(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				panic(err)
			}
			saves++
			time.Sleep(time.Duration(rand.IntN(8000)) * time.Microsecond)
			if savedAs() < k {
				time.Sleep(20 * time.Millisecond) // not a swap rpctap is about to undo
				if got := savedAs(); got < k {
					lost++
					t.Logf("the editor's save %d was lost: the file holds save %d", k, got)
				}
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	wrapped, refused := 0, 0
	for range 100 {
		_, errs, code := rpctapIn(t, dir, "wrap", "claude-desktop", "everything", "--config", path, "--rpctap", "/opt/bin/rpctap")
		switch {
		case code == 0:
			wrapped++
		case strings.Contains(errs, "changed while rpctap was editing it"):
			refused++
		case strings.Contains(errs, "already runs through rpctap"):
		default:
			t.Errorf("wrap: exit %d: %s", code, errs)
		}
	}
	close(stop)
	<-done
	t.Logf("%d saves by the editor, %d wraps, %d refused as the file changed, %d saves lost", saves, wrapped, refused, lost)
	if lost > 0 {
		t.Errorf("%d of the editor's %d saves were lost to a wrap", lost, saves)
	}
	if wrapped < 5 {
		t.Errorf("only %d of 100 wraps went through, too few to tell", wrapped)
	}
}

// A crash after the rename must not leave an empty config: the new file
// is on disk before it takes the old one's place, and the rename itself
// is on disk before rpctap says it is done.
func TestWrapSyncsTheNewConfigToDiskBeforeItTakesTheOldOnesPlaceAndTheFolderAfter(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed; the test watches wrap's system calls with it")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "claude_desktop_config.json")
	copySample(t, "claude_desktop_config.json", path)
	logPath := filepath.Join(dir, "strace.log")
	out, err := exec.Command(strace, "-f", "-y", "-qq", "-e", "signal=none", "-e", "trace=fsync,fdatasync,rename,renameat,renameat2", "-o", logPath,
		rpctapBinary(t), "wrap", "claude-desktop", "everything", "--config", path, "--rpctap", "/opt/bin/rpctap").CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("ptrace")) {
			t.Skipf("strace cannot trace here: %s", out)
		}
		t.Fatalf("wrap under strace: %v\n%s", err, out)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	tmpRE := regexp.MustCompile(`rename\w*\(.*"(` + regexp.QuoteMeta(dir) + `/\.claude_desktop_config\.json\.rpctap-\d+)".*"` + regexp.QuoteMeta(path) + `"`)
	renamed, tmp := -1, ""
	for i, l := range lines {
		if m := tmpRE.FindStringSubmatch(l); m != nil {
			renamed, tmp = i, m[1]
			break
		}
	}
	if renamed < 0 {
		t.Fatalf("no rename of a new file over the config:\n%s", b)
	}
	synced := func(from, to int, p string) bool {
		for _, l := range lines[from:to] {
			if strings.Contains(l, "fsync(") && strings.Contains(l, "<"+p+">") {
				return true
			}
		}
		return false
	}
	if !synced(0, renamed, tmp) {
		t.Errorf("the new file %s was not synced before it took the config's place:\n%s", tmp, b)
	}
	if !synced(0, renamed, path+".rpctap-backup") {
		t.Errorf("the backup was not synced before the config was replaced:\n%s", b)
	}
	if !synced(renamed+1, len(lines), dir) {
		t.Errorf("the folder %s was not synced after the rename:\n%s", dir, b)
	}
}
