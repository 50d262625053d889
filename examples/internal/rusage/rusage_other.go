//go:build !linux && !darwin

package rusage

// Self returns the zero Usage: the system does not say.
func Self() Usage { return Usage{} }
