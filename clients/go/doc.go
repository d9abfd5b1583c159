// Package meshadopt drives the mesh-adopt command from a Go installer: it starts
// `mesh-adopt check --json` or `mesh-adopt run --json`, hands it the genesis credentials on
// its standard input, reads the JSON-lines event stream it writes into typed events, stops it
// cleanly when the installer's context ends, and turns how it ended into typed errors.
//
// The event types (events_gen.go) are generated from the Rust types that write the stream
// (`just go-types`), so they follow the stream's schema field for field; docs/events.md says
// what each event means, and docs/driving.md how an installer in any language drives the
// command.
package meshadopt
