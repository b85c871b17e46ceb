package definition

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	// digestPinned is repo@sha256:<64 lower-case hex>. A tag can be moved to
	// other code after publishing; a digest cannot, so only a digest lets the
	// definition hash stand for the code that runs.
	digestPinned = regexp.MustCompile(`^[^\s@]+@sha256:[0-9a-f]{64}$`)
	// configName is what survives as the suffix of a FUNP_ variable.
	configName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	// releaseVersion is a release tag: "v", then what a PluginInstallation's
	// pluginVersion accepts (its CRD pattern, ^[0-9][0-9A-Za-z.+-]*$).
	releaseVersion = regexp.MustCompile(`^v[0-9][0-9A-Za-z.+-]*$`)

	pullPolicies = sets.New("", "Always", "IfNotPresent", "Never")
	badges       = sets.New(BadgeSuccess, BadgeWarning, BadgeDanger, BadgeInfo, BadgeNeutral)
	configTypes  = sets.New(ConfigInt, ConfigBool, ConfigString, ConfigEnum)
)

// Validate checks a definition against the platform's rules and reports
// every violation, each with the path of its field.
func (d *PluginDefinition) Validate(opts ...ParseOption) error {
	var o parseOptions
	for _, opt := range opts {
		opt(&o)
	}
	var errs field.ErrorList
	if d.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), d.APIVersion, []string{APIVersion}))
	}
	if d.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), d.Kind, []string{Kind}))
	}
	errs = append(errs, validateMetadata(&d.Metadata, field.NewPath("metadata"))...)
	errs = append(errs, validateSpec(&d.Spec, o, field.NewPath("spec"))...)
	if err := errs.ToAggregate(); err != nil {
		return fmt.Errorf("invalid plugin definition: %w", err)
	}
	return nil
}

func validateMetadata(m *Metadata, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	name := path.Child("name")
	if m.Name == "" {
		return append(errs, field.Required(name, "the plugin's identity"))
	}
	for _, msg := range validation.IsDNS1123Label(m.Name) {
		errs = append(errs, field.Invalid(name, m.Name, msg))
	}
	if m.Version != "" && !releaseVersion.MatchString(m.Version) {
		errs = append(errs, field.Invalid(path.Child("version"), m.Version,
			`must be a release tag, "v" and the version (v0.3.0); the registry publishes it without the "v", as installations pin it`))
	}
	return errs
}

func validateSpec(s *Spec, o parseOptions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	image := path.Child("image")
	switch {
	case s.Image == "" && o.requireImage:
		errs = append(errs, field.Required(image, "a published definition pins its image as repo@sha256:<digest>"))
	case s.Image != "" && !digestPinned.MatchString(s.Image):
		errs = append(errs, field.Invalid(image, s.Image, "must be pinned by digest (repo@sha256:<64 hex>), not a mutable tag"))
	}
	if !pullPolicies.Has(s.ImagePullPolicy) {
		errs = append(errs, field.NotSupported(path.Child("imagePullPolicy"), s.ImagePullPolicy, sets.List(pullPolicies)))
	}
	for i, crd := range s.CRDs {
		errs = append(errs, validateResourceName(crd, path.Child("crds").Index(i))...)
	}
	for i, e := range s.Menu.Organization {
		errs = append(errs, validateResourceName(e.CRD, path.Child("menu", "organization").Index(i).Child("crd"))...)
	}
	for i, e := range s.Menu.Project {
		errs = append(errs, validateResourceName(e.CRD, path.Child("menu", "project").Index(i).Child("crd"))...)
	}
	for _, key := range sortedKeys(s.UIHints) {
		errs = append(errs, validateUIHint(s.UIHints[key], path.Child("uiHints").Key(key))...)
	}
	for i, r := range s.AllowedResources {
		p := path.Child("allowedResources").Index(i)
		if r.Version == "" {
			errs = append(errs, field.Required(p.Child("version"), ""))
		}
		if r.Resource == "" {
			errs = append(errs, field.Required(p.Child("resource"), ""))
		}
		if len(r.Verbs) == 0 {
			errs = append(errs, field.Required(p.Child("verbs"), "list the verbs the console may use"))
		}
	}
	errs = append(errs, validateConfigSchema(s.ConfigSchema, path.Child("configSchema"))...)
	return errs
}

// validateResourceName requires <plural>.<group>: a bare plural is ambiguous
// across API groups.
func validateResourceName(name string, path *field.Path) field.ErrorList {
	plural, group, ok := strings.Cut(name, ".")
	if !ok || plural == "" || group == "" {
		return field.ErrorList{field.Invalid(path, name, "must be <plural>.<group>")}
	}
	return nil
}

func validateUIHint(h UIHint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.StatusMapping == nil {
		return nil
	}
	p := path.Child("statusMapping")
	if h.StatusMapping.JSONPath == "" {
		errs = append(errs, field.Required(p.Child("jsonPath"), ""))
	}
	for _, value := range sortedKeys(h.StatusMapping.Values) {
		errs = append(errs, validateBadge(h.StatusMapping.Values[value].Badge, p.Child("values").Key(value).Child("badge"))...)
	}
	if h.StatusMapping.Default != nil {
		errs = append(errs, validateBadge(h.StatusMapping.Default.Badge, p.Child("default", "badge"))...)
	}
	return errs
}

func validateBadge(b Badge, path *field.Path) field.ErrorList {
	if badges.Has(b) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, b, sets.List(badges))}
}

func validateConfigSchema(schema []ConfigField, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, f := range schema {
		p := path.Index(i)
		switch {
		case f.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case !configName.MatchString(f.Name):
			errs = append(errs, field.Invalid(p.Child("name"), f.Name, "must be upper snake case ([A-Z][A-Z0-9_]*): it becomes FUNP_"+f.Name))
		case seen.Has(f.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), f.Name))
		}
		seen.Insert(f.Name)
		if !configTypes.Has(f.Type) {
			errs = append(errs, field.NotSupported(p.Child("type"), f.Type, sets.List(configTypes)))
			continue
		}
		if f.Type == ConfigEnum && len(f.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "an enum lists its values"))
		}
		if f.Type != ConfigEnum && len(f.Values) > 0 {
			errs = append(errs, field.Forbidden(p.Child("values"), "only an enum has values"))
		}
		if f.Default != "" {
			if err := checkValue(f, f.Default); err != nil {
				errs = append(errs, field.Invalid(p.Child("default"), f.Default, err.Error()))
			}
		}
	}
	return errs
}

// checkValue reports whether value is valid for the field's type.
func checkValue(f ConfigField, value string) error {
	switch f.Type {
	case ConfigInt:
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return fmt.Errorf("not an integer")
		}
	case ConfigBool:
		if _, err := strconv.ParseBool(value); err != nil {
			return fmt.Errorf("not a boolean")
		}
	case ConfigEnum:
		if !slices.Contains(f.Values, value) {
			return fmt.Errorf("not one of %s", strings.Join(f.Values, ", "))
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
