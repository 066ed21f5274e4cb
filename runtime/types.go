package runtime

import "time"

// Sandbox describes a sandbox cordon knows of.
type Sandbox struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	Pid       int       `json:"pid"`
	Owner     int       `json:"owner"`
	Args      []string  `json:"args"`
	Workspace string    `json:"workspace"`
	Created   time.Time `json:"created"`
	// Orphaned is set when the cordon process that ran it is gone.
	Orphaned bool `json:"orphaned,omitempty"`
}

// Meta is what cordon records about a live sandbox besides libcontainer's
// state.
type Meta struct {
	Owner     int       `json:"owner"`
	OwnerTime uint64    `json:"ownerStartTime"`
	Args      []string  `json:"args"`
	Workspace string    `json:"workspace"`
	Created   time.Time `json:"created"`
	// Scrub is the spec's AnnotationScrub, for GC to apply when the run
	// crashed.
	Scrub string `json:"scrub,omitempty"`
}
