package watch

// IgnoreEvents makes a Watch drop every file event, as if the kernel had
// lost them all, leaving its rescan alone to find changes.
func IgnoreEvents(o *Options) { o.ignoreEvents = true }
