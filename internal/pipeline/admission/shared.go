package admission

// InstallationKeys are the admission's counters that every instance
// changes, one row each unless spread: the recognizer's request window
// and the recognitions in flight. The wiring spreads them over shards
// (quota.Spread), so concurrent instances do not abort each other on one
// row.
func InstallationKeys() []string { return []string{RequestsKey, InFlightKey} }
