package job

import "time"

// Ms is t in UTC at whole milliseconds, the stores' precision; zero stays zero.
func Ms(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Millisecond)
}

// Stored is j with its times as both stores keep them (Ms).
func Stored(j Job) Job {
	for _, t := range []*time.Time{&j.NextRunAt, &j.ClaimUntil, &j.DeletedAt, &j.UploadBy, &j.EndedAt, &j.CreatedAt, &j.UpdatedAt, &j.ReservedDay} {
		*t = Ms(*t)
	}
	return j
}

// Live are the states that are not terminal.
func Live(states []State) []State {
	var out []State
	for _, st := range states {
		if !st.Terminal() {
			out = append(out, st)
		}
	}
	return out
}
