package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/service"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var mf modelFlags
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "config [--vault DIR] [flags]",
		Short: "Print the effective settings and where each comes from",
		Long: `Print the settings a command would use and where each value comes from: a flag, an
environment variable, the config file (its top level or its section for the vault) or the
default. Precedence: flag > environment > config file > default. Keys are never shown, only
whether they are set.

The config file is $VAULT_AGENT_CONFIG, else config.toml in the vault-agent folder of your user
config dir (~/.config/vault-agent/config.toml on Linux). It holds the settings below by their
flag names, and [vault."DIR"] sections for one vault:

  model = "gpt-4o-mini"
  exclude = ["Archive/**", "Templates/**"]

  [vault."~/Work"]
  base-url = "http://localhost:11434/v1"
  model = "llama3.1"

The variables: VAULT_AGENT_PROVIDER, VAULT_AGENT_MODEL (else OPENAI_MODEL), VAULT_AGENT_BASE_URL
(else OPENAI_BASE_URL), VAULT_AGENT_EMBED_MODEL, VAULT_AGENT_EMBED_BASE_URL, VAULT_AGENT_EXCLUDE
(comma-separated globs), VAULT_AGENT_PLANNER (true/false), VAULT_AGENT_MODE; keys:
OPENAI_API_KEY, VAULT_AGENT_EMBED_API_KEY.`,
		Example: `  vault-agent config
  vault-agent config --vault ~/Notes
  VAULT_AGENT_MODEL=llama3.1 vault-agent config --base-url http://localhost:11434/v1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags, err := rf.settings(cmd)
			if err != nil {
				return err
			}
			if err := mf.check(cmd); err != nil {
				return err
			}
			env := service.ProcessEnv()
			vaultFrom := "--vault"
			if vf.vault == "" {
				vaultFrom = "the current folder"
				if dir, err := env.DefaultVault(); err == nil {
					vf.vault = dir
				}
			}
			settings := mf.settings().Merge(flags)
			vf.settings(&settings)
			writeConfig(cmd.OutOrStdout(), env, vf.vault, vaultFrom, settings)
			return nil
		},
	}
	cmd.Flags().StringVar(&vf.vault, "vault", "", "the vault whose config file section applies (default: the current folder, when it holds .obsidian/ or markdown notes)")
	mf.add(cmd)
	addEmbedFlags(cmd, &vf.embedModel, &vf.embedBaseURL)
	cmd.Flags().StringSliceVar(&vf.excludes, "exclude", nil, "glob of vault paths to skip, e.g. 'Archive/**' (repeatable)")
	rf.add(cmd, "agent loop: react, roa, par or staged", "the write_todos planner", "maximum agent iterations (1-50)", "maximum time of a run")
	return cmd
}

// writeConfig prints the effective settings for the vault at root ("" for
// none) with the flags given, and where each comes from.
func writeConfig(w io.Writer, env service.Env, root, rootFrom string, flags service.Settings) {
	s := env.Layered(root, flags, nil)
	switch {
	case env.ConfigPath == "":
		fmt.Fprintln(w, "config file: none (no user config dir; set VAULT_AGENT_CONFIG)")
	case env.Config == nil:
		fmt.Fprintf(w, "config file: %s (not there)\n", env.ConfigPath)
	default:
		fmt.Fprintf(w, "config file: %s\n", env.ConfigPath)
	}
	if root == "" {
		fmt.Fprintln(w, "vault:       none (the current folder is not a vault; --vault DIR shows its section)")
	} else {
		fmt.Fprintf(w, "vault:       %s (%s)\n", root, rootFrom)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "setting\tvalue\tfrom")
	for _, k := range service.Keys {
		if k.File == "" {
			continue
		}
		value, from := settingValue(s, k.Field), s.Source(k.Field)
		if from == "" {
			from = "default"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.File, value, from)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	set := func(key string) string {
		if key != "" {
			return "set"
		}
		return "not set"
	}
	fmt.Fprintf(w, "keys:        OPENAI_API_KEY %s, VAULT_AGENT_EMBED_API_KEY %s (never shown)\n", set(env.APIKey), set(env.EmbedAPIKey))
	c := service.ChooseModel(s, env)
	fmt.Fprintf(w, "chat model:  %s (%s)\n", c.Name(), c.Why())
	if c.Notice != "" {
		fmt.Fprintf(w, "             %s\n", c.Notice)
	}
	for _, p := range env.Problems(root) {
		fmt.Fprintf(w, "problem:     %s\n", p)
	}
}

// settingValue shows the value of a setting, or what its absence means.
func settingValue(s service.Settings, field string) string {
	switch field {
	case "Provider":
		return or(s.Provider, "(none: openai when a model is named, else offline)")
	case "Model":
		return or(s.Model, "(none: the offline model answers)")
	case "BaseURL":
		return or(s.BaseURL, "(none: the OpenAI API)")
	case "EmbedModel":
		return or(s.EmbedModel, "(none: search is lexical)")
	case "EmbedBaseURL":
		return or(s.EmbedBaseURL, "(none: OPENAI_BASE_URL, else the OpenAI API)")
	case "Excludes":
		return or(strings.Join(s.Excludes, ", "), "(none)")
	case "Planner":
		if s.Planner == nil {
			return "(off; on in acp)"
		}
		if *s.Planner {
			return "on"
		}
		return "off"
	case "Mode":
		return or(s.Mode, "react")
	}
	return ""
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
