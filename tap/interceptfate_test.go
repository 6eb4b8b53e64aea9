package tap

import (
	"strings"
	"testing"
)

// An intercept filter that tests fate: is refused with a sentence that
// says why (the tap judges a frame before anything becomes of it, so the
// token could never match, or would always): at the flag, the view's
// :intercept and the socket alike. The word as text is no token.
func TestAnInterceptFilterOnFateIsRefusedSayingWhy(t *testing.T) {
	for _, expr := range []string{"fate:held", "method:tools/call !fate:dropped", "FATE:captured"} {
		err := ParseIntercept(expr)
		if err == nil || !strings.Contains(err.Error(), "tests fate:, which no frame has yet when the tap judges it") || !strings.Contains(err.Error(), "drop the fate: token") {
			t.Errorf("%s: %v", expr, err)
		}
		if _, err := newInterceptor(&Tap{}, expr, "", 0); err == nil {
			t.Errorf("a tap started holding %s", expr)
		}
	}
	for _, expr := range []string{`"fate:held"`, "method:fate/*", "fate"} {
		if err := ParseIntercept(expr); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}
