//go:build !linux && !darwin

package rusage

import "os"

// Self returns the zero Usage: the system does not say.
func Self() Usage { return Usage{} }

// Of returns the zero Usage: the system does not say.
func Of(*os.ProcessState) Usage { return Usage{} }
