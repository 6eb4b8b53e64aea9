// Package userconfig reads the user's rpctap config file,
// $XDG_CONFIG_HOME/rpctap/config.toml: defaults for flags that a flag
// on the command line overrides.
package userconfig
