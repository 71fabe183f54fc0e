package memory

import "time"

// now is the clock for entries appended without a timestamp; a test seam.
var now = time.Now
