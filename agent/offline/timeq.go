package offline

// timeOnly reports whether the goal is only about a period.
func (st *convState) timeOnly() bool { return false }

func (st *convState) timeAnswer() string { return "" }
