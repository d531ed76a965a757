// Package spec holds mlx5gen's API descriptors (the YAML files in this
// directory, documented in README.md) and embeds them, so that the
// mlx5gen command works from any directory.
package spec

import "embed"

// FS holds every descriptor file, at its path relative to this directory.
//
//go:embed enums hw api
var FS embed.FS
