package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
)

// OSEnv is this process's Env: its OS, the user's home directory, the
// working directory and the environment.
func OSEnv() Env {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	return Env{GOOS: runtime.GOOS, Home: home, Cwd: cwd, Getenv: os.Getenv}
}

// A File is a config file that exists, with its bytes.
type File struct {
	Location
	Src []byte
}

// Find picks the file that has server: the one config names (--config),
// or the one of host's usual files that has it, among those of scope
// (--scope) when scope is not "". Its errors are sentences to show.
func Find(h Host, server, config, scope string, env Env) (File, error) {
	if config != "" {
		src, err := os.ReadFile(config)
		if err != nil {
			return File{}, fmt.Errorf("cannot read the config file: %w", err)
		}
		return File{Location{Host: h, Scope: "given", Path: config}, src}, nil
	}
	var found, existing []File
	var looked []string
	for _, l := range Locations(h, env) {
		if scope != "" && l.Scope != scope {
			continue
		}
		if !slices.Contains(looked, l.Path) {
			looked = append(looked, l.Path)
		}
		src, err := os.ReadFile(l.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return File{}, fmt.Errorf("cannot read %s's config: %w", h.Title, err)
		}
		f := File{l, src}
		existing = append(existing, f)
		servers, err := List(src, l.ServersKey())
		if err != nil {
			return File{}, FileError(l.Path, err)
		}
		for _, s := range servers {
			if s.Name == server {
				found = append(found, f)
				break
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return File{}, fmt.Errorf("server %q is in %s (%s) and in %s (%s); say which with --scope %s or --scope %s", server, found[0].Path, found[0].Scope, found[1].Path, found[1].Scope, found[0].Scope, found[1].Scope)
	case len(existing) == 1:
		return existing[0], nil // its own error names the servers it has
	case len(existing) == 0:
		return File{}, fmt.Errorf("found no %s config (looked for %s); if it is elsewhere, give it with --config PATH", h.Title, strings.Join(looked, " and "))
	}
	return File{}, fmt.Errorf("no %s config has a server %q (looked in %s); rpctap wrap --list shows the servers", h.Title, server, strings.Join(looked, " and "))
}

// FileError says what is wrong with the config file at path: where it
// is not valid JSON, or err.
func FileError(path string, err error) error {
	var syn *SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("%s is not valid JSON at %w; fix it, then run the command again", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// A Listed is a host's config file as rpctap wrap --list shows it: where
// it is, and its servers, or Err when it cannot be read or is no config
// (FileError says which).
type Listed struct {
	Location
	Servers []Server
	Err     error
}

// Look reads the config files of hosts that exist, in order (with config
// not "", that file as the one host's), and says which paths it looked
// at. A file of per-project entries that has none for this project is
// left out.
func Look(hosts []Host, config string, env Env) (files []Listed, looked []string) {
	for _, h := range hosts {
		locs := Locations(h, env)
		if config != "" {
			locs = []Location{{Host: h, Scope: "given", Path: config}}
		}
		for _, l := range locs {
			if !slices.Contains(looked, l.Path) {
				looked = append(looked, l.Path)
			}
			src, err := os.ReadFile(l.Path)
			if errors.Is(err, fs.ErrNotExist) && config == "" {
				continue
			}
			var servers []Server
			if err == nil {
				servers, err = List(src, l.ServersKey())
				if err == nil && len(servers) == 0 && l.Key != nil {
					continue // no entries for this project in a file listed anyway
				}
			}
			files = append(files, Listed{l, servers, err})
		}
	}
	return files, looked
}
