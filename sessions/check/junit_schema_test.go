package check_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions/check"
)

// junitSchema is the JUnit XML schema CI report views read (Jenkins
// xUnit's junit-10.xsd), kept in testdata/schemas.
const junitSchema = "../../testdata/schemas/junit-10.xsd"

// The JUnit report validates against the JUnit XML schema, with failures
// and without, a faulty header, and a peer's hostile text in it. xmllint
// (Debian's libxml2-utils, installed by .ci/run) does the validating.
func TestJUnitReportValidatesAgainstTheJUnitSchema(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint is not installed (apt-get install libxml2-utils; .ci/run installs it): the JUnit report is not validated against its schema")
	}
	cases := []struct {
		name    string
		session string
		failOn  classify.Severity
	}{
		{"hostile-fail-on-error", hostileSession, classify.Error},
		{"hostile-fail-on-info", hostileSession, classify.Info},
		{"hostile-never-fail", hostileSession, 0},
		{"clean", `{"rpctap":"session","version":1,"id":"c","started":"2026-11-29T18:00:00Z","framing":"ndjson","profile":"jsonrpc"}` + "\n", classify.Error},
	}
	dir := t.TempDir()
	for _, c := range cases {
		var out bytes.Buffer
		if err := check.WriteJUnit(&out, check.File{Name: "s<&>\".jsonl", FailOn: c.failOn}, checkOf(t, c.session)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, c.name+".xml")
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", junitSchema, path).CombinedOutput(); err != nil {
			t.Errorf("%s: the JUnit report does not validate against %s: %v\n%s", c.name, junitSchema, err, msg)
		}
	}
}
