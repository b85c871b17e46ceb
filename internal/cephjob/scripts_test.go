package cephjob

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The verb scripts run by bash against fakes of the tools they call: a
// ceph whose OSD map is a file (and whose commands fail when a test says
// so), a ceph-bluestore-tool that answers as Ceph 18.2.7's does (a label
// when the device starts with one, else ENOENT), ceph-volume, blockdev, and
// a node's /sys and udev database. The devices are files, written by the
// real dd, so a wipe is seen in their bytes.

// fakeNode is one run's world.
type fakeNode struct {
	t    *testing.T
	root string
}

const (
	fakeCeph = `#!/bin/bash
state=$FAKE_ROOT/ceph
# The tools' own version, as the image's ceph prints it without a cluster.
[ "$1" = --version ] && { echo "ceph version $(cat "$state/tools_version" 2>/dev/null || echo 19.2.3) (c92aebb279828e9c3c1f5d24613efca272649e62) squid (stable)"; exit 0; }
# skip --conf F --keyring K --name N
shift 6
[ -e "$state/unreachable" ] && { echo "Error ETIMEDOUT: the monitors cannot be reached" >&2; exit 110; }
case "$*" in
"versions -f json") cat "$state/versions.json" 2>/dev/null || echo '{"mon":{"ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)":1},"osd":{"ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)":3},"overall":{"ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)":4}}' ;;
"osd dump -f json") [ -e "$state/dump_fails" ] && { echo "Error EIO: the OSD map cannot be read" >&2; exit 5; }; cat "$state/osd_dump.json" ;;
"osd out osd."* | "osd in osd."*) [ -e "$state/refuse_$2" ] && { echo "Error EINVAL: refused" >&2; exit 22; }; echo "marked $2 $3." ;;
"osd purge osd."*)
	[ -e "$state/purge_ignored" ] && { echo "purged $3"; exit 0; }
	id=${3#osd.}
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["osds"] = [o for o in d["osds"] if o["osd"] != int(sys.argv[2])]; json.dump(d, open(sys.argv[1], "w"))' "$state/osd_dump.json" "$id"
	echo "purged $3" ;;
"osd crush ls "*) exit 2 ;;
"osd crush rm "*) exit 0 ;;
*) echo "fake ceph: unexpected $*" >&2; exit 22 ;;
esac
`
	fakeBluestoreTool = `#!/bin/bash
# show-label --dev DEV
dev=$3
[ -e "$dev.eio" ] && { echo "unable to read label for $dev: (5) Input/output error" >&2; exit 1; }
head=$(head -c 6 "$dev")
if [ "$head" = "LABEL:" ]; then
	uuid=$(head -c 42 "$dev" | cut -c 7-)
	printf '{"%s": {"osd_uuid": "%s", "whoami": "3"}}' "$dev" "$uuid"
	exit 0
fi
echo "bluestore($dev) _read_bdev_label unable to decode label at offset 102" >&2
echo "unable to read label for $dev: (2) No such file or directory" >&2
exit 1
`
	fakeCephVolume = `#!/bin/bash
echo "--> Zapping: $3"
`
	fakeBlockdev = `#!/bin/bash
stat -c %s "$2"
`
)

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	// dd writes with O_DIRECT, which tmpfs refuses: the devices live on disk.
	root, err := os.MkdirTemp("/var/tmp", "cephjob-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	n := &fakeNode{t: t, root: root}
	for _, dir := range []string{"bin", "ceph", "dev", "mon", "work", "sys", "udev"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
	}
	for name, script := range map[string]string{"ceph": fakeCeph, "ceph-bluestore-tool": fakeBluestoreTool, "ceph-volume": fakeCephVolume, "blockdev": fakeBlockdev} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "bin", name), []byte(script), 0o755))
	}
	n.write("mon/secret.keyring", "AQD==")
	n.osds(3)
	return n
}

func (n *fakeNode) write(rel, content string) {
	n.t.Helper()
	require.NoError(n.t, os.WriteFile(filepath.Join(n.root, rel), []byte(content), 0o644))
}

// osds sets the OSD map's OSDs, up; down ones are negative.
func (n *fakeNode) osds(ids ...int) {
	var osds []map[string]any
	for _, id := range ids {
		up := 1
		if id < 0 {
			id, up = -id, 0
		}
		osds = append(osds, map[string]any{"osd": id, "up": up, "uuid": fmt.Sprintf("uuid-%d", id)})
	}
	raw, err := json.Marshal(map[string]any{"osds": osds})
	require.NoError(n.t, err)
	n.write("ceph/osd_dump.json", string(raw))
}

// device makes a 2 MiB disk vdb (udev serial given, none when ""), its
// first bytes the BlueStore label of label ("" for none).
func (n *fakeNode) device(name, label, serial string) string {
	n.t.Helper()
	content := make([]byte, 2<<20)
	copy(content[4096:], "payload")
	if label != "" {
		copy(content, "LABEL:"+label)
	}
	path := filepath.Join(n.root, "dev", name)
	require.NoError(n.t, os.WriteFile(path, content, 0o644))
	require.NoError(n.t, os.MkdirAll(filepath.Join(n.root, "sys", name), 0o755))
	n.write("sys/"+name+"/dev", "253:16")
	n.write("sys/"+name+"/size", "4096")
	if serial != "" {
		n.write("udev/b253:16", "S:disk/by-id/virtio-"+serial+"\nE:ID_SERIAL="+serial+"\n")
	}
	return path
}

func (n *fakeNode) head(path string) string {
	raw, err := os.ReadFile(path)
	require.NoError(n.t, err)
	return string(bytes.TrimRight(raw[:48], "\x00"))
}

// run runs verb's script as the Job's container would, with env added; it
// returns the exit code and the termination message.
func (n *fakeNode) run(verb Verb, env map[string]string) (int, string) {
	n.t.Helper()
	script := cephPreamble + "is_block() { [ -f \"$1\" ]; }\n" + verbScripts[verb]
	// /tmp first: the fakes live under /var/tmp.
	for _, path := range [][2]string{
		{"/tmp/", filepath.Join(n.root, "work") + "/"},
		{"/dev/termination-log", filepath.Join(n.root, "termination-log")},
		{"/var/lib/rook-ceph-mon/", filepath.Join(n.root, "mon") + "/"},
		{"/sys/class/block", filepath.Join(n.root, "sys")},
		{"/run/udev/data", filepath.Join(n.root, "udev")},
	} {
		script = strings.ReplaceAll(script, path[0], path[1])
	}
	os.Remove(filepath.Join(n.root, "termination-log"))
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = []string{"PATH=" + filepath.Join(n.root, "bin") + ":" + os.Getenv("PATH"), "FAKE_ROOT=" + n.root,
		"ROOK_MON_ENDPOINTS=a=10.0.0.1:6789", "ROOK_CEPH_USERNAME=client.admin",
		EnvOSDID + "=3", EnvOSDUUID + "=", EnvDevice + "=", EnvHost + "=", EnvIdentity + "="}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(n.t, err)
	}
	msg, _ := os.ReadFile(filepath.Join(n.root, "termination-log"))
	n.t.Logf("%s: exit %d, answer %q, stderr %q", verb, code, msg, stderr.String())
	return code, strings.TrimSpace(string(msg))
}

// A failed ceph fails out and in: piped into tail, its exit code used to
// be lost (tail's was the Job's).
func TestOutAndInFailWhenCephFails(t *testing.T) {
	n := newFakeNode(t)
	for _, verb := range []Verb{VerbOut, VerbIn} {
		code, _ := n.run(verb, nil)
		assert.Zero(t, code, verb)
		n.write("ceph/refuse_"+string(verb), "")
		code, answer := n.run(verb, nil)
		assert.NotZero(t, code, "%s: a refused `ceph osd %s` fails the Job", verb, verb)
		assert.Contains(t, answer, "EINVAL")
	}
	n.write("ceph/unreachable", "")
	code, _ := n.run(VerbOut, nil)
	assert.NotZero(t, code)
}

// An OSD is marked in only while Ceph has it up: marked in while down it
// would take PGs it cannot serve.
func TestInOnlyAnOSDThatIsUp(t *testing.T) {
	n := newFakeNode(t)
	n.osds(-3)
	code, answer := n.run(VerbIn, nil)
	assert.NotZero(t, code)
	assert.Equal(t, "osd.3 is down: not marked in (an OSD marked in while down takes PGs it cannot serve)", answer)
	n.osds(3)
	code, answer = n.run(VerbIn, nil)
	assert.Zero(t, code)
	assert.Equal(t, "marked in osd.3.", answer)
}

// A purge succeeds only when the OSD map, read after it, no longer has the
// OSD; an OSD map that cannot be read is never "the OSD is not there".
func TestPurgeSucceedsOnlyWhenTheOSDIsGone(t *testing.T) {
	n := newFakeNode(t)
	purge := map[string]string{EnvOSDUUID: "uuid-3"}
	n.osds(1, 3)
	code, answer := n.run(VerbPurge, purge)
	assert.Zero(t, code)
	assert.Equal(t, "osd.3 is not in Ceph's OSD map", answer)
	assert.NotContains(t, n.dump(), `"osd": 3`)
	code, _ = n.run(VerbPurge, purge)
	assert.Zero(t, code, "purging a purged OSD is done")

	n.osds(1, 3)
	n.write("ceph/purge_ignored", "")
	code, answer = n.run(VerbPurge, purge)
	assert.NotZero(t, code, "the purge answered, but the OSD is still there")
	assert.Contains(t, answer, "still in Ceph's OSD map")

	code, answer = n.run(VerbPurge, map[string]string{EnvOSDUUID: "uuid-of-the-purged-one"})
	assert.NotZero(t, code, "osd.3 is another OSD now: never purged")
	assert.Contains(t, answer, "refused: osd.3 now has UUID uuid-3")
	assert.Contains(t, n.dump(), `"osd":3`, "nothing purged")

	n.write("ceph/unreachable", "")
	code, _ = n.run(VerbPurge, purge)
	assert.NotZero(t, code, "a failed `ceph osd dump` fails the purge")
}

func (n *fakeNode) dump() string {
	raw, err := os.ReadFile(filepath.Join(n.root, "ceph/osd_dump.json"))
	require.NoError(n.t, err)
	return string(raw)
}

// identify tells a label from no label from a missing device, and fails
// when the device cannot be read; it names the device's identity.
func TestIdentifyTellsNoLabelFromUnreadable(t *testing.T) {
	n := newFakeNode(t)
	labelled := n.device("vdb", "0c8f3a52-5d8e-4c3b-9a57-8e1f0d2c4b6a", "SER123")
	code, answer := n.run(VerbIdentify, map[string]string{EnvDevice: labelled})
	require.Zero(t, code)
	assert.Equal(t, Label{State: LabelFound, OSDUUID: "0c8f3a52-5d8e-4c3b-9a57-8e1f0d2c4b6a", Identity: "sectors=4096 serial=SER123 wwn= backing="}, ReadLabel(answer))

	blank := n.device("vdc", "", "SER456")
	code, answer = n.run(VerbIdentify, map[string]string{EnvDevice: blank})
	require.Zero(t, code)
	assert.Equal(t, LabelNone, ReadLabel(answer).State)

	code, answer = n.run(VerbIdentify, map[string]string{EnvDevice: filepath.Join(n.root, "dev", "vdz")})
	require.Zero(t, code)
	assert.Equal(t, Label{State: LabelMissing}, ReadLabel(answer))

	// A detached loop device, a pulled disk's stale node: there, size 0;
	// it reads as EOF and ceph-bluestore-tool decodes that as no label.
	n.write("dev/vdd", "")
	code, answer = n.run(VerbIdentify, map[string]string{EnvDevice: filepath.Join(n.root, "dev", "vdd")})
	require.Zero(t, code)
	assert.Equal(t, LabelMissing, ReadLabel(answer).State, "no medium is no disk, not a disk without a label")

	n.write("dev/vdc.eio", "")
	code, answer = n.run(VerbIdentify, map[string]string{EnvDevice: blank})
	assert.NotZero(t, code, "a device whose label cannot be read is no answer")
	assert.Contains(t, answer, "Input/output error")
}

// The zap wipes only the disk the purged OSD was on: its label names the
// OSD, or (a wipe cut short) it has none and is the very disk identified.
func TestZapWipesOnlyThePurgedOSDsDisk(t *testing.T) {
	const uuid, other = "0c8f3a52-5d8e-4c3b-9a57-8e1f0d2c4b6a", "7d1e9b40-2a6f-4e85-b3c1-5f9a8d7e6c24"
	identity := "sectors=4096 serial=SER123 wwn= backing="
	zap := func(n *fakeNode, device, identity string) (int, string) {
		return n.run(VerbZap, map[string]string{EnvDevice: device, EnvOSDUUID: uuid, EnvIdentity: identity})
	}
	t.Run("its label", func(t *testing.T) {
		n := newFakeNode(t)
		dev := n.device("vdb", uuid, "SER123")
		code, answer := zap(n, dev, identity)
		assert.Zero(t, code)
		assert.Contains(t, answer, "wiped")
		assert.Empty(t, n.head(dev), "the label is zeroed")
	})
	t.Run("another OSD's label", func(t *testing.T) {
		n := newFakeNode(t)
		dev := n.device("vdb", other, "SER123")
		code, answer := zap(n, dev, identity)
		assert.NotZero(t, code)
		assert.Contains(t, answer, "holds the OSD with UUID "+other)
		assert.Equal(t, "LABEL:"+other, n.head(dev), "nothing written")
	})
	t.Run("no label, the disk identified", func(t *testing.T) {
		n := newFakeNode(t)
		dev := n.device("vdb", "", "SER123")
		code, answer := zap(n, dev, identity)
		assert.Zero(t, code, "a wipe cut short is finished")
		assert.Contains(t, answer, "wiped")
	})
	t.Run("no label, another disk", func(t *testing.T) {
		n := newFakeNode(t)
		dev := n.device("vdb", "", "SER999")
		data := "payload-of-another-disk"
		n.write("dev/vdb", data+strings.Repeat("\x00", 2<<20))
		code, answer := zap(n, dev, identity)
		assert.NotZero(t, code, "no label is no proof when the disk is not the one identified")
		assert.Contains(t, answer, "is not the disk that held")
		assert.Equal(t, data, n.head(dev), "nothing written")
	})
	t.Run("no label, only a size to tell", func(t *testing.T) {
		n := newFakeNode(t)
		dev := n.device("vdb", "", "")
		code, answer := zap(n, dev, "sectors=4096 serial= wwn= backing=")
		assert.NotZero(t, code)
		assert.Contains(t, answer, "nothing but its size")
	})
	t.Run("an OSD Ceph still has (a forged status names a live one)", func(t *testing.T) {
		n := newFakeNode(t)
		dev := n.device("vdb", uuid, "SER123")
		n.write("ceph/osd_dump.json", `{"osds":[{"osd":7,"up":1,"uuid":"`+uuid+`"}]}`)
		code, answer := zap(n, dev, identity)
		assert.NotZero(t, code)
		assert.Contains(t, answer, "Ceph's OSD map still has osd.7 with UUID "+uuid)
		assert.Equal(t, "LABEL:"+uuid, n.head(dev), "nothing written")
	})
	t.Run("an OSD map that cannot be read", func(t *testing.T) {
		n := newFakeNode(t)
		dev := n.device("vdb", uuid, "SER123")
		n.write("ceph/dump_fails", "")
		code, answer := zap(n, dev, identity)
		assert.NotZero(t, code)
		assert.Contains(t, answer, "Ceph's OSD map cannot be read: nothing is wiped")
		assert.Equal(t, "LABEL:"+uuid, n.head(dev), "nothing written")
	})
	t.Run("unreadable", func(t *testing.T) {
		n := newFakeNode(t)
		dev := n.device("vdb", uuid, "SER123")
		n.write("dev/vdb.eio", "")
		code, _ := zap(n, dev, identity)
		assert.NotZero(t, code)
		assert.Equal(t, "LABEL:"+uuid, n.head(dev), "nothing written")
	})
}

// L3: the node verbs run the Rook operator image's Ceph tools; older than
// an OSD the cluster runs, they refuse (nothing read, nothing wiped), and
// the refusal says so and nothing of the disk. Tools as new as the newest
// OSD read.
func TestNodeVerbsRefuseToolsOlderThanTheOSDs(t *testing.T) {
	const uuid = "0c8f3a52-5d8e-4c3b-9a57-8e1f0d2c4b6a"
	env := func(dev string) map[string]string {
		return map[string]string{EnvDevice: dev, EnvOSDUUID: uuid, EnvIdentity: "sectors=4096 serial=SER123 wwn= backing="}
	}
	n := newFakeNode(t)
	dev := n.device("vdb", uuid, "SER123")
	n.write("ceph/versions.json", `{"osd":{"ceph version 19.2.3 (c92a) squid (stable)":3},"overall":{"ceph version 19.2.3 (c92a) squid (stable)":3,"ceph version 20.2.0 (a1b2) tentacle (stable)":3}}`)
	for _, verb := range []Verb{VerbIdentify, VerbZap} {
		code, answer := n.run(verb, env(dev))
		assert.NotZero(t, code, verb)
		assert.True(t, refusedOldTools(answer), "%s: %s", verb, answer)
		assert.Contains(t, answer, "Ceph tools are of Ceph 19, and a daemon of the cluster runs Ceph 20", "the mons are upgraded first: OSDs made then get labels of 20")
		assert.True(t, DiskNotRead(answer), answer)
		assert.Equal(t, "LABEL:"+uuid, n.head(dev), "%s: nothing written", verb)
	}

	n.write("ceph/tools_version", "20.2.0")
	code, answer := n.run(VerbIdentify, env(dev))
	require.Zero(t, code, answer)
	assert.Equal(t, uuid, ReadLabel(answer).OSDUUID, "tools as new as the newest OSD read")

	n.write("ceph/unreachable", "")
	code, answer = n.run(VerbIdentify, env(dev))
	assert.NotZero(t, code)
	assert.False(t, refusedOldTools(answer), "a Ceph that cannot be asked is no refusal of the tools")
	assert.Contains(t, answer, "cannot read the versions")
	assert.True(t, DiskNotRead(answer), "nor an answer about the disk: %s", answer)
}
