// Package textdist measures how far apart two short names are, for "did
// you mean" suggestions (the filter's keys, replay's nearest method).
package textdist

// Max is the distance given to names longer than Max bytes: they are not
// compared, so a peer's or a user's huge name costs nothing.
const Max = 64

// Distance counts the insertions, deletions, substitutions and swaps of
// adjacent bytes that turn a into b (optimal string alignment); Max when
// either is longer than Max bytes.
func Distance(a, b string) int {
	if len(a) > Max || len(b) > Max {
		return Max
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
