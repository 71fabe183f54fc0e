package memory

import (
	"encoding/json"
	"time"
)

var rawNull = json.RawMessage("null")

// now is the clock for entries appended without a timestamp; a test seam.
var now = time.Now
