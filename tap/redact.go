package tap

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
)

// A redactor masks secrets in what is recorded and shown. The wire is
// never changed.
type redactor struct {
	secrets []secret
}

type secret struct {
	name  string
	value []byte
	mask  []byte
}

// minSecretLen keeps short values (a "1", "true") from masking half of
// every frame.
const minSecretLen = 4

// secretName reports whether an environment variable's name looks like it
// holds a secret.
func secretName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL"} {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// newRedactor collects the values to mask: those of environment variables
// with secret-looking names, and those named by --redact: NAME (the value
// of that variable) or NAME=VALUE (a literal value, shown as NAME).
func newRedactor(env []string, flags []string) (*redactor, error) {
	r := &redactor{}
	add := func(name, value string) {
		if len(value) < minSecretLen {
			return
		}
		r.secrets = append(r.secrets, secret{name: name, value: []byte(value), mask: []byte("***" + name + "***")})
	}
	lookup := map[string]string{}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		lookup[name] = value
		if secretName(name) {
			add(name, value)
		}
	}
	for _, f := range flags {
		name, value, literal := strings.Cut(f, "=")
		if name == "" {
			return nil, fmt.Errorf("--redact %q names nothing: use --redact NAME (mask the value of environment variable NAME) or --redact NAME=VALUE (mask VALUE)", f)
		}
		if !literal {
			v, ok := lookup[name]
			if !ok {
				v, ok = os.LookupEnv(name)
			}
			if !ok {
				return nil, fmt.Errorf("--redact %s: there is no environment variable %s to take a value from; use --redact %s=VALUE to mask a value directly", name, name, name)
			}
			value = v
		}
		add(name, value)
	}
	if len(r.secrets) == 0 {
		return nil, nil
	}
	// Longer values first, so a value that contains another is masked whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i].value) > len(r.secrets[j].value) })
	return r, nil
}

// mask returns a copy of b with every secret masked, and whether any was.
func (r *redactor) mask(b []byte) ([]byte, bool) {
	var out []byte
	for _, s := range r.secrets {
		src := b
		if out != nil {
			src = out
		}
		if !bytes.Contains(src, s.value) {
			continue
		}
		out = bytes.ReplaceAll(src, s.value, s.mask)
	}
	return out, out != nil
}
