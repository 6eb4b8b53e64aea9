package tap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// slowTap listens in the live directory as a tap that answers info only
// after delay (never, with a negative delay), and gives its name and
// socket.
func slowTap(t *testing.T, delay time.Duration) (name, socket string) {
	t.Helper()
	dir, err := sessions.LiveDir()
	if err != nil {
		t.Fatal(err)
	}
	name = fmt.Sprintf("slow-%d-%d", os.Getpid(), time.Now().UnixNano())
	socket = filepath.Join(dir, name+".sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadBytes('\n'); err != nil || delay < 0 {
					time.Sleep(time.Minute)
					return
				}
				time.Sleep(delay)
				b, _ := json.Marshal(Info{Name: name, PID: 1, Socket: socket})
				c.Write(append(b, '\n'))
			}()
		}
	}()
	return name, socket
}

func TestATapSlowToAnswerIsStillFoundByName(t *testing.T) {
	defer func(w time.Duration) { infoWait = w }(infoWait)
	infoWait = 50 * time.Millisecond
	name, _ := slowTap(t, 300*time.Millisecond)
	info, err := FindTap(name)
	if err != nil || info.Name != name {
		t.Fatalf("FindTap(%q) = %+v, %v; want the tap that answered after 300 ms", name, info, err)
	}
}

func TestATapThatNeverAnswersIsNamedWhenNoneMatches(t *testing.T) {
	defer func(w, s time.Duration) { infoWait, slowInfoWait = w, s }(infoWait, slowInfoWait)
	infoWait, slowInfoWait = 50*time.Millisecond, 200*time.Millisecond
	_, socket := slowTap(t, -1)
	_, err := FindTap(fmt.Sprintf("no-such-tap-%d", time.Now().UnixNano()))
	if err == nil || !strings.Contains(err.Error(), "did not answer") || !strings.Contains(err.Error(), socket) {
		t.Fatalf("FindTap of a name no tap has, with a tap that never answers: %v; want it to say which socket did not answer", err)
	}
}

func TestASocketWhoseTapIsGoneIsRemovedByTheListing(t *testing.T) {
	dir, err := sessions.LiveDir()
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, fmt.Sprintf("gone-%d-%d.sock", os.Getpid(), time.Now().UnixNano()))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	defer os.Remove(socket)
	if _, err := LiveTaps(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Errorf("the socket of a tap that is gone is still in the live directory after a listing (%v)", err)
	}
}
