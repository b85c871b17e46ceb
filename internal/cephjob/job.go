package cephjob

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/fundament-oss/ceph-rook/internal/rook"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The plugin's one way to talk to Ceph: a Job in the cluster namespace that
// runs one verb with Rook's own image (the operator's, so the ceph CLI
// matches the running Rook) and Rook's admin credentials, mounted as Rook
// mounts them into its own OSD removal Job (deploy/examples/osd-purge.yaml:
// the rook-ceph-mon-endpoints ConfigMap, the rook-ceph-mon Secret). Its
// answer is the container's termination message (cephJobAnswer), which the
// API server keeps in the pod's status; a failed verb's is the end of its
// output. Every verb is idempotent, and every step re-reads Ceph (a probe)
// before it acts, so a Job that ran twice, or whose answer was lost, changes
// nothing.

// Verb is what a Ceph Job does.
type Verb string

const (
	// VerbProbe reads Ceph's facts about one OSD and the cluster around it
	// (probe.py): health, pools and their failure domains, hosts
	// and OSDs with usage and PGs, the full ratios, safe-to-destroy.
	VerbProbe Verb = "probe"
	// VerbOut marks the OSD out while it still runs: Ceph copies its PGs
	// elsewhere from a full set of copies.
	VerbOut Verb = "out"
	// VerbIn marks it in again (an abort), only while Ceph has it up.
	VerbIn Verb = "in"
	// VerbPurge removes the OSD from Ceph (CRUSH, auth, OSD map), then its
	// CRUSH host when that holds no other OSD. It passes neither --force
	// nor --yes-i-really-mean-it: Ceph's manager takes either for "force"
	// and skips its safe-to-destroy check (src/mgr/DaemonServer.cc, "osd
	// purge"); without them it purges only what is safe to destroy and
	// answers EBUSY or EAGAIN otherwise.
	VerbPurge Verb = "purge"
	// VerbIdentify reads the BlueStore label of the device on its node:
	// which OSD's data the device holds now, whatever its kernel name.
	VerbIdentify Verb = "identify"
	// VerbZap wipes the device on its node, only if Ceph's OSD map has no
	// OSD of the purged one's UUID any more and the device's BlueStore
	// label still names that OSD, so that Rook's next prepare does not
	// find the OSD again: ceph-volume's zap (partitions, LVM), then what
	// Rook's teardown guide zeroes (the first 10 MiB, where ceph-volume's
	// own zap writes, and 4 KiB at 1, 10, 100 and 1000 GiB, BlueStore's
	// label copies). ceph-volume alone is not enough: on a device it does
	// not classify (a loop device, seen on real Ceph 18.2.7) it reports
	// "Zapping successful" and writes nothing.
	VerbZap Verb = "zap"
	// VerbPGStates reads how many PGs are in each state (`ceph pg stat`),
	// as {"pgs": {"active+clean": 97}}: an upgrade step starts only when
	// every PG is active+clean.
	VerbPGStates Verb = "pgs"
)

// A verb's inputs, as the environment of its container: the scripts read
// them from there, never spliced into their text.
const (
	EnvOSDID = "OSD_ID"
	// EnvAlsoOSDID is the probe's other OSD, whose state it tells
	// besides (-1: none).
	EnvAlsoOSDID = "ALSO_OSD_ID"
	EnvOSDUUID   = "OSD_UUID"
	EnvDevice    = "DEVICE"
	EnvHost      = "HOST"
	// EnvIdentity is the device's identity as the identify verb read it
	// (device_identity): a zap that finds no label wipes only that disk.
	EnvIdentity = "IDENTITY"
)

// nodeVerbs run on the disk's node, privileged, with the node's /dev.
var nodeVerbs = map[Verb]bool{VerbIdentify: true, VerbZap: true}

// NodeVerb says verb runs on the disk's node and reads its label.
func NodeVerb(verb Verb) bool { return nodeVerbs[verb] }

const (
	// App labels every Ceph Job.
	App = "ceph-rook-ceph-job"
	// VerbLabel and OwnerLabel say what a Ceph Job does and
	// for whom: the owner's UID, which no name length can break.
	VerbLabel  = "ceph.fundament.io/verb"
	OwnerLabel = "ceph.fundament.io/owner-uid"
	// cephJobTTL lets Kubernetes delete a finished Job the plugin did not
	// (it deletes each one once it has read its answer).
	cephJobTTL = int32(3600)
	// cephJobDeadline bounds one verb: a ceph command that hangs (no
	// monitor quorum) fails the Job instead of holding the step.
	cephJobDeadline = int64(300)
)

//go:embed probe.py
var probeScript string

// cephPreamble writes a ceph.conf and keyring from Rook's mon endpoints
// ("a=10.0.0.1:6789,b=...") and admin key, as Rook's toolbox does, and
// defines ceph with them. pipefail: a failed ceph piped into tail or
// python fails the verb, never reads as its success.
//
// read_label prints the OSD UUID of a device's BlueStore label and tells
// "no label" (status 3) from "cannot be read" (status 1, why on stderr):
// ceph-bluestore-tool answers ENOENT both for a readable device without a
// label and for one it cannot open (BlueStore::_read_bdev_label, seen on
// Ceph 18.2.7: "unable to decode label" vs "failed to open"; ceph-volume's
// _get_bluestore_info reads the same answer as "not BlueStore"), so the
// device is first checked to be there, with a medium (a detached loop
// device, a pulled disk's stale node: size 0, which reads as EOF and
// decodes as no label), and readable: then ENOENT is "no label", and any
// other failure (EIO, a bad checksum, a short read) is "cannot be read". device_identity is what names the disk whatever its kernel
// name: its size, udev's serial and WWN, a loop device's backing file.
// tools_read_labels refuses a node verb whose Ceph tools (the OSD's own
// image, or the Rook operator's when its Deployment is gone: Rook
// v1.18.11's carries Ceph 19.2.3) are of an older major release than a
// daemon the cluster runs (`ceph versions`, overall): nothing
// proves that ceph-bluestore-tool reads a label a newer BlueStore wrote,
// and one it cannot decode would read as "no label". The e2e's Rook image
// carries its Ceph 18.2.7, the OSDs' own release.
// osd_with_uuid names the OSD of Ceph's map with a UUID ("" when none),
// and fails when the map cannot be read.
// osd_state prints absent, down or up, and osd_uuid the OSD's UUID (""
// when absent); both fail when the OSD map cannot be read (a failed dump
// is never "absent").
const cephPreamble = `set -euo pipefail
mon_host=$(printf '%s' "$ROOK_MON_ENDPOINTS" | sed 's/[a-z0-9_-]*=//g')
printf '[global]\nmon_host = %s\n' "$mon_host" > /tmp/ceph.conf
printf '[%s]\nkey = %s\n' "$ROOK_CEPH_USERNAME" "$(cat /var/lib/rook-ceph-mon/secret.keyring)" > /tmp/keyring
CONN="--conf /tmp/ceph.conf --keyring /tmp/keyring --name $ROOK_CEPH_USERNAME"
ceph() { timeout 60 ceph $CONN "$@"; }
is_block() { [ -b "$1" ]; }
read_label() {
	if ! is_block "$1"; then echo "$1 is not a block device on this node" >&2; return 4; fi
	local size got
	size=$(blockdev --getsize64 "$1" 2>/tmp/read.err) || { echo "$1 cannot be read: $(tail -c 300 /tmp/read.err)" >&2; return 1; }
	if [ "$size" = 0 ]; then echo "$1 has no medium (size 0)" >&2; return 4; fi
	got=$(dd if="$1" bs=4096 count=1 status=none 2>/tmp/read.err | wc -c)
	if [ "$got" != 4096 ]; then echo "$1 cannot be read (read $got of 4096 bytes): $(tail -c 300 /tmp/read.err)" >&2; return 1; fi
	if ceph-bluestore-tool show-label --dev "$1" >/tmp/label.json 2>/tmp/label.err; then
		python3 -c 'import json, sys; print(next(iter(json.load(sys.stdin).values()))["osd_uuid"])' < /tmp/label.json ||
			{ echo "the label of $1 does not name an OSD" >&2; return 1; }
		return 0
	fi
	if grep -q 'unable to read label for .*(2) No such file or directory' /tmp/label.err; then return 3; fi
	echo "the label of $1 cannot be read: $(tail -c 300 /tmp/label.err)" >&2; return 1
}
tools_read_labels() {
	local tools newest
	tools=$(command ceph --version 2>/dev/null | sed -n 's/^ceph version \([0-9][0-9]*\)\..*/\1/p')
	if [ -z "$tools" ]; then echo "cannot tell the version of this image's Ceph tools ($(command ceph --version 2>&1 | head -c 200))" >&2; return 1; fi
	if ! ceph versions -f json > /tmp/versions.json 2>/tmp/versions.err; then echo "cannot read the versions Ceph's daemons run: $(tail -c 300 /tmp/versions.err)" >&2; return 1; fi
	newest=$(python3 -c 'import json, re, sys; v = [int(m.group(1)) for k in json.load(sys.stdin).get("overall", {}) for m in [re.match(r"ceph version (\d+)\.", k)] if m]; print(max(v) if v else "")' < /tmp/versions.json 2>/dev/null) ||
		{ echo "cannot read the versions Ceph's daemons run: $(head -c 300 /tmp/versions.json)" >&2; return 1; }
	if [ -n "$newest" ] && [ "$tools" -lt "$newest" ]; then
		echo "refused: ` + toolsTooOld + ` $tools, and a daemon of the cluster runs Ceph $newest: labels a newer Ceph wrote are not read, nor wiped, with older tools" >&2
		return 1
	fi
}
udev_property() { sed -n "s/^E:$2=//p" "/run/udev/data/b$1" 2>/dev/null | head -n 1 || true; }
device_identity() {
	local name majmin
	name=$(basename "$(readlink -f "$1")")
	majmin=$(cat "/sys/class/block/$name/dev")
	printf 'sectors=%s serial=%s wwn=%s backing=%s' "$(cat "/sys/class/block/$name/size")" \
		"$(udev_property "$majmin" ID_SERIAL)" "$(udev_property "$majmin" ID_WWN)" "$(cat "/sys/class/block/$name/loop/backing_file" 2>/dev/null || true)"
}
osd_uuid() {
	ceph osd dump -f json > /tmp/osd_dump.json || return 1
	python3 -c 'import json, sys; o = [o for o in json.load(sys.stdin)["osds"] if o["osd"] == int(sys.argv[1])]; print(o[0].get("uuid", "") if o else "")' "$1" < /tmp/osd_dump.json
}
osd_with_uuid() {
	ceph osd dump -f json > /tmp/osd_dump.json || return 1
	python3 -c 'import json, sys; print(" ".join("osd.%d" % o["osd"] for o in json.load(sys.stdin)["osds"] if o.get("uuid") == sys.argv[1]))' "$1" < /tmp/osd_dump.json
}
osd_state() {
	ceph osd dump -f json > /tmp/osd_dump.json || return 1
	python3 -c 'import json, sys; o = [o for o in json.load(sys.stdin)["osds"] if o["osd"] == int(sys.argv[1])]; print("absent" if not o else "up" if o[0].get("up") == 1 else "down")' "$1" < /tmp/osd_dump.json
}
`

// verbScripts are the verbs as shell, after cephPreamble. Their inputs come
// from the environment (OSD_ID, OSD_UUID, DEVICE, IDENTITY, HOST), never
// spliced into the script, and their answer goes to the termination log.
var verbScripts = map[Verb]string{
	VerbProbe: `python3 -c "$PROBE" "$OSD_ID" "$ALSO_OSD_ID" $CONN > /dev/termination-log`,
	VerbOut:   `ceph osd out "osd.$OSD_ID" 2>&1 | tail -c 1000 > /dev/termination-log`,
	VerbIn: `state=$(osd_state "$OSD_ID")
if [ "$state" != up ]; then echo "osd.$OSD_ID is $state: not marked in (an OSD marked in while down takes PGs it cannot serve)" > /dev/termination-log; exit 1; fi
ceph osd in "osd.$OSD_ID" 2>&1 | tail -c 1000 > /dev/termination-log`,
	VerbPurge: `uuid=$(osd_uuid "$OSD_ID")
if [ -n "$uuid" ] && [ "$uuid" != "$OSD_UUID" ]; then echo "refused: osd.$OSD_ID now has UUID $uuid, not $OSD_UUID (Ceph gave the purged OSD's ID to another)" > /dev/termination-log; exit 1; fi
if [ -n "$uuid" ]; then ceph osd purge "osd.$OSD_ID"; fi
after=$(osd_uuid "$OSD_ID")
if [ "$after" = "$OSD_UUID" ]; then echo "osd.$OSD_ID is still in Ceph's OSD map after its purge" > /dev/termination-log; exit 1; fi
if [ -n "$HOST" ] && [ -z "$(ceph osd crush ls "$HOST" 2>/dev/null)" ]; then ceph osd crush rm "$HOST" || true; fi
echo "osd.$OSD_ID is not in Ceph's OSD map" > /dev/termination-log`,
	VerbIdentify: `tools_read_labels 2>/tmp/why || { printf '%s (` + diskNotRead + `)\n' "$(tail -c 900 /tmp/why)" > /dev/termination-log; exit 1; }
rc=0; uuid=$(read_label "$DEVICE" 2>/tmp/why) || rc=$?
case $rc in
0) label=found ;;
3) label=none ;;
4) label=missing ;;
*) tail -c 1000 /tmp/why > /dev/termination-log; exit 1 ;;
esac
identity=""
if [ "$label" != missing ]; then identity=$(device_identity "$DEVICE"); fi
python3 -c 'import json, sys; print(json.dumps(dict(zip(("label", "osdUUID", "identity"), sys.argv[1:]))))' "$label" "$uuid" "$identity" > /dev/termination-log`,
	VerbPGStates: `ceph pg stat -f json | python3 -c "$PG_STATES" > /dev/termination-log`,
	VerbZap: `tools_read_labels 2>/tmp/why || { printf '%s (` + diskNotRead + `)\n' "$(tail -c 900 /tmp/why)" > /dev/termination-log; exit 1; }
live=$(osd_with_uuid "$OSD_UUID") || { echo "Ceph's OSD map cannot be read: nothing is wiped before it says no OSD has UUID $OSD_UUID" > /dev/termination-log; exit 1; }
if [ -n "$live" ]; then echo "refused: Ceph's OSD map still has $live with UUID $OSD_UUID: only a purged OSD's disk is wiped" > /dev/termination-log; exit 1; fi
rc=0; found=$(read_label "$DEVICE" 2>/tmp/why) || rc=$?
case $rc in
0) ;;
3) found="" ;;
*) tail -c 1000 /tmp/why > /dev/termination-log; exit 1 ;;
esac
if [ -n "$found" ] && [ "$found" != "$OSD_UUID" ]; then echo "refused: $DEVICE ` + zapAnotherOSD + ` $found, not $OSD_UUID" > /dev/termination-log; exit 1; fi
if [ -z "$found" ]; then
	identity=$(device_identity "$DEVICE")
	case "$IDENTITY" in
	"" | *"serial= wwn= backing=") echo "refused: $DEVICE carries no BlueStore label, and nothing but its size tells it is the disk that held the OSD with UUID $OSD_UUID" > /dev/termination-log; exit 1 ;;
	esac
	if [ "$identity" != "$IDENTITY" ]; then echo "refused: $DEVICE carries no BlueStore label and is not the disk that held the OSD with UUID $OSD_UUID ($identity, not $IDENTITY)" > /dev/termination-log; exit 1; fi
else
	ceph-volume lvm zap "$DEVICE" > /tmp/zap.log 2>&1 || { tail -c 1000 /tmp/zap.log > /dev/termination-log; exit 1; }
fi
size=$(blockdev --getsize64 "$DEVICE")
dd if=/dev/zero of="$DEVICE" bs=1M count=10 oflag=direct,dsync status=none
for gib in 1 10 100 1000; do
	off=$((gib << 30))
	if [ "$off" -lt "$size" ]; then dd if=/dev/zero of="$DEVICE" bs=4096 count=1 seek=$((off / 4096)) oflag=direct,dsync status=none; fi
done
rc=0; read_label "$DEVICE" >/dev/null 2>/tmp/why || rc=$?
if [ "$rc" != 3 ]; then echo "$DEVICE still carries a BlueStore label after the wipe, or cannot be read: $(tail -c 300 /tmp/why)" > /dev/termination-log; exit 1; fi
echo "wiped $DEVICE (it held the OSD with UUID $OSD_UUID)" > /dev/termination-log`,
}

// toolsTooOld is how a node verb's refusal says its tools are older than
// the cluster's Ceph (refusedOldTools).
const toolsTooOld = "this Job's Ceph tools are of Ceph"

// refusedOldTools (the tests' reading of the refusal) says a node verb refused because its Ceph tools are of an
// older major release than a daemon of the cluster runs.
func refusedOldTools(answer string) bool {
	return strings.Contains(answer, toolsTooOld)
}

// diskNotRead ends the answer of a node verb that failed before it read
// the disk (its tools refused, or Ceph could not be asked about them).
const diskNotRead = "nothing of the disk was read"

// DiskNotRead says a failed node verb's answer says nothing of the disk:
// it failed before it read it.
func DiskNotRead(answer string) bool {
	return strings.Contains(answer, diskNotRead)
}

// zapAnotherOSD is how a zap's refusal says the device holds another
// OSD's label (ZapFoundAnotherOSD).
const zapAnotherOSD = "holds the OSD with UUID"

// ZapFoundAnotherOSD says a zap refused because the device's label names
// another OSD: its name points at another OSD's disk, which no wipe
// command may name.
func ZapFoundAnotherOSD(answer string) bool {
	return strings.HasPrefix(answer, "refused: ") && strings.Contains(answer, zapAnotherOSD)
}

// Request is one verb for one owner.
type Request struct {
	Verb Verb
	// Seq tells apart the Jobs of the same verb one owner runs (a probe
	// per poll).
	Seq   int32
	OSDID int32
	// AlsoOSDID is a probe's other OSD (a replacement's), whose state it
	// tells besides; nil: none.
	AlsoOSDID *int32
	// OSDUUID, Device and Node are a node verb's: the OSD the device must
	// hold, the device, and its node. Host is purge's CRUSH host.
	OSDUUID, Device, Node, Host string
	// Identity is the zap's: the device's identity at identify time.
	Identity string
}

// Name names the Job of req for the owner with uid: the verb, the
// UID and the sequence, so that no two owners' Jobs share a name and one
// made again after a crash is the same Job.
func Name(uid types.UID, req Request) string {
	return fmt.Sprintf("ceph-rook-%s-%s-%d", req.Verb, strings.ReplaceAll(string(uid), "-", ""), req.Seq)
}

// Render is the Job that runs req for owner, in namespace, with
// rookImage.
func Render(namespace string, owner metav1.OwnerReference, req Request, rookImage string) *batchv1.Job {
	labels := map[string]string{rook.AppLabel: App, VerbLabel: string(req.Verb), OwnerLabel: string(owner.UID)}
	secretKey := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "rook-ceph-mon"}, Key: key}}
	}
	env := []corev1.EnvVar{
		{Name: "ROOK_MON_ENDPOINTS", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "rook-ceph-mon-endpoints"}, Key: "data"}}},
		{Name: "ROOK_CEPH_USERNAME", ValueFrom: secretKey("ceph-username")},
		{Name: EnvOSDID, Value: strconv.Itoa(int(req.OSDID))},
		{Name: EnvOSDUUID, Value: req.OSDUUID},
		{Name: EnvDevice, Value: req.Device},
		{Name: EnvHost, Value: req.Host},
		{Name: EnvIdentity, Value: req.Identity},
	}
	switch req.Verb {
	case VerbProbe:
		also := "-1"
		if req.AlsoOSDID != nil {
			also = strconv.Itoa(int(*req.AlsoOSDID))
		}
		env = append(env, corev1.EnvVar{Name: "PROBE", Value: probeScript}, corev1.EnvVar{Name: EnvAlsoOSDID, Value: also})
	case VerbPGStates:
		env = append(env, corev1.EnvVar{Name: "PG_STATES", Value: pgStatesScript})
	}
	container := corev1.Container{
		Name:                     "ceph",
		Image:                    rookImage,
		Command:                  []string{"bash", "-c", cephPreamble + verbScripts[req.Verb]},
		Env:                      env,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		VolumeMounts:             []corev1.VolumeMount{{Name: "ceph-admin-secret", MountPath: "/var/lib/rook-ceph-mon", ReadOnly: true}},
	}
	volumes := []corev1.Volume{{Name: "ceph-admin-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "rook-ceph-mon", Items: []corev1.KeyToPath{{Key: "ceph-secret", Path: "secret.keyring"}},
	}}}}
	pod := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		AutomountServiceAccountToken: new(false), // it talks to Ceph, not to Kubernetes
		Containers:                   []corev1.Container{container},
		Volumes:                      volumes,
	}
	if nodeVerbs[req.Verb] {
		// As Rook's OSD prepare: root and privileged, on the disk's node,
		// with the node's /dev (and udev's view of it).
		pod.NodeSelector = map[string]string{corev1.LabelHostname: req.Node}
		pod.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		pod.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: new(true), RunAsUser: new(int64(0))}
		pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: "devices", MountPath: "/dev"}, corev1.VolumeMount{Name: "udev", MountPath: "/run/udev", ReadOnly: true})
		pod.Volumes = append(pod.Volumes,
			corev1.Volume{Name: "devices", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/dev"}}},
			corev1.Volume{Name: "udev", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/run/udev"}}})
	}
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: Name(owner.UID, req), Namespace: namespace, Labels: labels,
			// Deleting the owner deletes its Jobs (a cluster-scoped owner
			// of a namespaced Job is allowed).
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:            new(int32(0)), // a failed verb is an answer; the plugin decides what next
			ActiveDeadlineSeconds:   new(cephJobDeadline),
			TTLSecondsAfterFinished: new(cephJobTTL),
			Template:                corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
}

// Answer is what a finished Ceph Job said.
type Answer struct {
	// Done: the Job finished; Succeeded: its verb did what it says.
	Done, Succeeded bool
	// Foreign: a Job of the name exists that is not the plugin's for this
	// owner; nothing of it is read (Message says so), and it is never
	// deleted. It counts as a Job that failed without running.
	Foreign bool
	// Ran: its container ran and ended, so Message is the script's own
	// answer; false for a Job that never ran (its node down, its pod never
	// scheduled: the deadline ended it).
	Ran bool
	// Message is the container's termination message (the verb's answer,
	// or the end of its output when it failed), else the Job's condition.
	Message string
}

// Read reads a Ceph Job's answer from the Job and its pods.
func Read(job *batchv1.Job, pods []corev1.Pod) Answer {
	var a Answer
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			a.Done, a.Succeeded = true, true
		case batchv1.JobFailed:
			a.Done, a.Message = true, c.Reason+": "+c.Message
		}
	}
	if !a.Done {
		return a
	}
	for _, p := range pods {
		for _, s := range p.Status.ContainerStatuses {
			if t := s.State.Terminated; t != nil && (t.ExitCode == 0) == a.Succeeded {
				a.Message, a.Ran = strings.TrimSpace(t.Message), true
			}
		}
	}
	return a
}

// LabelState is what an identify found on the device.
type LabelState string

const (
	// LabelFound: a BlueStore label, naming the OSD of OSDUUID.
	LabelFound LabelState = "found"
	// LabelNone: the device is there and readable, and carries no label.
	LabelNone LabelState = "none"
	// LabelMissing: no such block device on the node (the disk is gone).
	LabelMissing LabelState = "missing"
)

// Label is an identify answer: the device's label, and its identity
// (device_identity) for a later zap to check it wipes that disk. A device
// whose label cannot be read is no answer: the Job fails.
type Label struct {
	State    LabelState `json:"label"`
	OSDUUID  string     `json:"osdUUID"`
	Identity string     `json:"identity"`
}

// ReadLabel reads an identify answer; one that does not parse has no
// State.
func ReadLabel(answer string) Label {
	var l Label
	if json.Unmarshal([]byte(answer), &l) != nil {
		return Label{}
	}
	switch l.State {
	case LabelFound, LabelNone, LabelMissing:
		return l
	}
	return Label{}
}

// ParseName reads the verb and sequence back from a Name.
func ParseName(name string) (Verb, int32, bool) {
	rest, ok := strings.CutPrefix(name, "ceph-rook-")
	if !ok {
		return "", 0, false
	}
	verb, rest, ok := strings.Cut(rest, "-")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(rest[i+1:], 10, 32)
	if err != nil || verbScripts[Verb(verb)] == "" {
		return "", 0, false
	}
	return Verb(verb), int32(seq), true
}

// pgStatesScript turns `ceph pg stat -f json` (on stdin; the counts under
// pg_summary, or at the top as some releases print them, as probe.py reads
// them) into the pgs answer.
const pgStatesScript = `import json, sys
s = json.load(sys.stdin)
s = s.get("pg_summary", s)
print(json.dumps({"pgs": {x["name"]: x["num"] for x in s.get("num_pg_by_state", [])}}))
`

// ParsePGStates reads a pgs answer: the PGs by state.
func ParsePGStates(answer string) (map[string]int, error) {
	var a struct {
		PGs map[string]int `json:"pgs"`
	}
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		return nil, fmt.Errorf("read the PG states Ceph gave (%q): %w", answer, err)
	}
	if a.PGs == nil {
		return nil, fmt.Errorf("read the PG states Ceph gave: no pgs in %q", answer)
	}
	return a.PGs, nil
}
