package sessions

import "fmt"

// FormatSize is a size in bytes as rpctap writes sizes everywhere (the
// table, the detail pane, the picker, rpctap ls): at most three digits and
// a binary unit, "512 B", "11.6 KiB", "117 KiB", "18.1 MiB"; at most eight
// cells.
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	if n < 1<<10 {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), 0
	for v >= 1<<10 && u < len(units)-1 {
		v /= 1 << 10
		u++
	}
	if v < 99.95 {
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}
