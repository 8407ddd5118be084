package quota

// WithPick makes a spread counter (Spread) start at the shards pick
// chooses, for tests that need the same choices each run; any other
// counters are returned as they are.
func WithPick(c Counters, pick func(n int) int) Counters {
	switch s := c.(type) {
	case *spread:
		s.pick = pick
	case spreadExpirer:
		s.pick = pick
	}
	return c
}
