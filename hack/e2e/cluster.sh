#!/usr/bin/env bash
# A real Kubernetes cluster of E2E_NODES nodes (default 3) on this one
# machine: etcd, kube-apiserver (Node and RBAC authorization),
# kube-controller-manager and kube-scheduler on the machine itself, and per
# node its own network namespace and IP, containerd (root, state and
# socket of its own), kubelet (root dir and cgroup root of its own),
# kube-proxy and hostname; CoreDNS as a pod. Images are built locally.
#
#	hack/e2e/cluster.sh prepare # build (or find cached) what up needs; starts nothing
#	                            # (E2E_UPGRADE=1: also what the upgrade run needs)
#	hack/e2e/cluster.sh up      # bring it up; prints the admin kubeconfig
#	hack/e2e/cluster.sh down    # stop everything, restore what it changed
#	hack/e2e/cluster.sh stop-node NAME    # a node's outage: kubelet, kube-proxy, containers, containerd
#	hack/e2e/cluster.sh start-node NAME   # the node back
#
# The nodes are joined by the bridge e2e-br0 (10.250.0.1 on the machine,
# node i at 10.250.0.1<i>), the way kind separates nodes without Docker:
# each node's pods live on its own cni0 inside its namespace
# (10.244.<i>.0/24), every node routes the others' pod ranges straight to
# them, and the machine routes them for the API server. Nothing leaves the
# machine. A node shares the machine's mount namespace (the kubelet's
# volume mounts must be seen by its containerd), so every node sees every
# loop device: the e2e gives each node its own in the device list.
#
# Everything it runs is a child process recorded by PID in $E2E_STATE/pids;
# everything it changes on the machine (sysctls, the bridge, namespaces,
# cgroups, mounts) is undone by `down`, which then compares the machine
# with what `up` recorded and fails on any difference. The facts it relies
# on are in ../shared/spec/real-node.md's measurements: cgroup v1, no
# CAP_SYS_RESOURCE (restrict_oom_score_adj), no systemd, no registry.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=containerd.sh
source hack/e2e/containerd.sh
STATE="${E2E_STATE:-/tmp/ceph-rook-e2e}"
CACHE_ROOT="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
NODES="${E2E_NODES:-3}"
# E2E_UPGRADE=1 (the e2e's -upgrade) also builds and imports the operator
# image of the Rook release the upgrade phase starts from.
IMAGES_FLAGS=()
[[ ${E2E_UPGRADE:-} != 1 ]] || IMAGES_FLAGS=(-upgrade)
SERVICE_CIDR=10.96.0.0/16
SERVICE_IP=10.96.0.1
DNS_IP=10.96.0.10
CLUSTER_CIDR=10.244.0.0/16
BRIDGE=e2e-br0
HOST_IP=10.250.0.1
ETCD_PORT=12379
API_PORT=6443
COREDNS_IMAGE=registry.k8s.io/coredns/coredns:v1.15.0
LETTERS=(a b c d e)
# Machine-wide sysctls a kubelet sets (vm.*, kernel.*); the net.* ones the
# nodes' kubelets, kube-proxies and CNI set stay inside their namespaces.
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables)

log() { echo "e2e/cluster: $*" >&2; }
die() { log "$*"; exit 1; }

# Node i (1-based): its name, address, pod range and folder.
node_name() { echo "node-${LETTERS[$1 - 1]}"; }
node_ip() { echo "10.250.0.$((10 + $1))"; }
pod_cidr() { echo "10.244.$1.0/24"; }
node_index() { # name -> i
	local i
	for ((i = 1; i <= ${#LETTERS[@]}; i++)); do [[ $(node_name "$i") == "$1" ]] && { echo "$i"; return; }; done
	die "no node $1"
}
node_dir() { echo "$STATE/nodes/$(node_name "$1")"; }
netns() { echo "e2e-$(node_name "$1")"; }

kubeconfig() { # name user-file server
	cat >"$STATE/$1.kubeconfig" <<EOT
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://$3:$API_PORT", certificate-authority: "$STATE/pki/ca.crt"}
users:
- name: $1
  user: {client-certificate: "$STATE/pki/$2.crt", client-key: "$STATE/pki/$2.key"}
contexts:
- name: e2e
  context: {cluster: e2e, user: $1}
current-context: e2e
EOT
}

# start NAME CMD...: runs CMD in the background with its log in $STATE/logs
# and records its PID. CMD gets a session of its own (setsid): a signal to
# the e2e's process group (timeout(1) signals the whole group) must not
# stop the daemons at once and out of order, which orphans containerd's
# shims and their containers; `down` stops them in order instead.
start() {
	local name=$1
	shift
	setsid "$@" >>"$STATE/logs/$name.log" 2>&1 </dev/null &
	echo "$name $!" >>"$STATE/pids"
}

# on_node I sets NODE_EXEC to the command prefix that runs a command in
# node I's network and mount namespaces, under its own hostname (a UTS
# namespace of its own).
on_node() {
	local i=$1
	NODE_EXEC=(nsenter --net="/run/netns/$(netns "$i")" --mount="$(node_dir "$i")/mnt"
		unshare --uts sh -c 'hostname "$0" && exec "$@"' "$(node_name "$i")")
}

# node_devices gives node i a mount namespace of its own whose /dev holds
# every device of the machine but the loop devices: the e2e adds the
# node's own disks there (mknod), so that no node sees another's. Rook's
# OSD prepare lists every OSD it can open on its node (ceph-volume raw
# list); with one /dev for all, a node re-prepared while another's new
# disk became an OSD took that OSD for its own, and the OSD ran there.
# The kubelet and containerd share the namespace, so the kubelet's volume
# mounts are seen by the runtime, and privileged containers and hostPath
# /dev mounts get the node's /dev.
node_devices() {
	local i=$1 dir
	dir=$(node_dir "$i")
	mkdir -p "$dir/dev"
	mount -t tmpfs -o mode=755,size=4m "e2e-dev-$(node_name "$i")" "$dir/dev"
	(cd /dev && find . -mindepth 1 -maxdepth 1 ! -name 'loop[0-9]*' ! -name pts ! -name shm -print0 |
		xargs -0 cp -a --target-directory="$dir/dev")
	mkdir -p "$dir/dev/pts" "$dir/dev/shm"
	mount --bind /dev/pts "$dir/dev/pts"
	mount --bind /dev/shm "$dir/dev/shm"
	touch "$dir/mnt"
	unshare --mount="$dir/mnt" mount --rbind "$dir/dev" /dev
}

wait_for() { # what seconds command...
	local what=$1 seconds=$2
	shift 2
	for ((t = 0; t < seconds * 5; t++)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.2
	done
	die "$what: not ready after ${seconds}s (logs in $STATE/logs)"
}

kctl() { "$ENVTEST/kubectl" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }

# machine prints what up changes and down must restore, to compare.
machine() {
	echo "## links"; ip -o link show | awk '{print $2}' | sed 's/@.*//' | sort
	echo "## addresses"; ip -o addr show | awk '{print $2, $4}' | sort
	echo "## routes"; ip route show | sort
	echo "## namespaces"; ip netns list | sort
	for table in filter nat mangle raw; do
		echo "## iptables $table"; iptables-save -t "$table" 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'
	done
	echo "## mounts"; awk '{print $2}' /proc/mounts | sort
	echo "## cgroups"; find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d | sort
	echo "## sysctls"; for s in "${SYSCTLS[@]}"; do echo "$s $(sysctl -n "$s" 2>/dev/null || echo -)"; done
	echo "## paths"; ls -d /var/lib/kubelet /var/lib/rook /var/log/containers /var/log/pods 2>/dev/null || true
}

# network joins node i to the bridge: its namespace, its veth, its address,
# routes to every other node's pods, and the machine's route to its pods.
network() {
	local i=$1 ns
	ns=$(netns "$i")
	ip netns add "$ns"
	ip link add "e2e-$(node_name "$i")" type veth peer name eth0 netns "$ns"
	ip link set "e2e-$(node_name "$i")" master "$BRIDGE" up
	ip -n "$ns" addr add "$(node_ip "$i")/24" dev eth0
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
	ip -n "$ns" route add default via "$HOST_IP"
	local j
	for ((j = 1; j <= NODES; j++)); do
		((j == i)) || ip -n "$ns" route add "$(pod_cidr "$j")" via "$(node_ip "$j")"
	done
	ip route add "$(pod_cidr "$i")" via "$(node_ip "$i")" dev "$BRIDGE"
}

# cgroup_root makes node i's cgroup root in every v1 hierarchy (a kubelet
# requires its cgroupRoot to exist); a cpuset needs its CPUs and memory
# nodes before anything can join it.
cgroup_root() {
	local root="e2e-$(node_name "$1")" c
	for c in /sys/fs/cgroup/*/; do
		[[ -d $c$root ]] || mkdir "$c$root"
		if [[ -e ${c}cpuset.cpus ]]; then
			cat "${c}cpuset.cpus" >"$c$root/cpuset.cpus"
			cat "${c}cpuset.mems" >"$c$root/cpuset.mems"
		fi
	done
}

# node_config writes node i's CNI, containerd and kubelet configuration.
node_config() {
	local i=$1 dir name
	dir=$(node_dir "$i")
	name=$(node_name "$i")
	mkdir -p "$dir"/{containerd/root,containerd/state,containerd/opt,cni}
	# No masquerading: pods talk to every other pod and to the API server
	# by their own addresses, all on this machine.
	cat >"$dir/cni/10-e2e.conflist" <<EOT
{"cniVersion": "1.0.0", "name": "e2e", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(pod_cidr "$i")"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$dir/cni/ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}},
  {"type": "loopback"}
]}
EOT
	containerd_config "$dir/containerd" "$dir/cni" >"$dir/containerd/config.toml"
	cat >"$dir/kubelet.yaml" <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$STATE/pki/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupRoot: /e2e-$name
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: "unix://$dir/containerd/containerd.sock"
clusterDNS: ["$DNS_IP"]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
# The disk is shared with everything else on the machine: never evict or
# garbage-collect images because of it.
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
serializeImagePulls: false
# Each kubelet garbage-collects the pod log folders it does not know: in a
# shared /var/log/pods it deletes the other nodes' logs.
podLogsDir: $dir/pod-logs
EOT
}

# start_runtime starts node i's containerd.
start_runtime() {
	local i=$1 dir
	dir=$(node_dir "$i")
	on_node "$i"
	start "containerd-$(node_name "$i")" "${NODE_EXEC[@]}" containerd --config "$dir/containerd/config.toml"
	wait_for "containerd of $(node_name "$i")" 30 ctr --address "$dir/containerd/containerd.sock" version
}

# start_node starts node i's kubelet and kube-proxy.
start_node() {
	local i=$1 dir name
	dir=$(node_dir "$i")
	name=$(node_name "$i")
	on_node "$i"
	start "kubelet-$name" "${NODE_EXEC[@]}" "$NODEBIN/kubelet" --config "$dir/kubelet.yaml" --kubeconfig "$STATE/kubelet-$name.kubeconfig" \
		--node-ip "$(node_ip "$i")" --hostname-override "$name" --root-dir "/var/lib/kubelet/$name" --cert-dir "$dir/kubelet-pki"
	start "kube-proxy-$name" "${NODE_EXEC[@]}" "$NODEBIN/kube-proxy" --kubeconfig "$STATE/proxy.kubeconfig" --proxy-mode iptables \
		--conntrack-max-per-core 0 --cluster-cidr "$CLUSTER_CIDR" --hostname-override "$name"
}

# prepare installs the Debian packages a node needs and builds (or finds
# in the cache) everything up uses: the control plane, the node binaries,
# CoreDNS's image and the Ceph, Rook and pause images. It starts nothing,
# so it can run while the Go tests do (`just test` runs it beside them at
# the lowest CPU and I/O priority).
prepare() {
	[[ $(id -u) == 0 ]] || die "needs root (packages, the Ceph root filesystem)"
	local pkgs=()
	for bin in containerd:containerd runc:runc iptables:iptables conntrack:conntrack mmdebstrap:mmdebstrap losetup:mount nsenter:util-linux; do
		command -v "${bin%%:*}" >/dev/null || pkgs+=("${bin##*:}")
	done
	[[ -x /usr/lib/cni/bridge ]] || pkgs+=(containernetworking-plugins)
	if ((${#pkgs[@]})); then
		log "installing ${pkgs[*]} from Debian"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
	fi
	# The images first: the root filesystem is mostly downloads, which
	# overlap whatever else the machine compiles.
	go run ./internal/e2e/cmd/images "${IMAGES_FLAGS[@]}" >/dev/null
	ENVTEST=$(hack/envtest/build.sh)
	NODEBIN=$(hack/e2e/node-binaries.sh)
	COREDNS_ARCHIVE=$(go run ./internal/e2e/cmd/binimage -name "$COREDNS_IMAGE" -entrypoint /coredns \
		-file "$NODEBIN/coredns:/coredns:0755")
}

up() {
	[[ -e "$STATE/pids" ]] && die "$STATE/pids exists: a cluster is up (run down first)"
	[[ $(id -u) == 0 ]] || die "needs root (kubelet, containerd, namespaces)"
	((NODES >= 1 && NODES <= ${#LETTERS[@]})) || die "E2E_NODES=$NODES: from 1 to ${#LETTERS[@]}"
	# The kubelets' root dirs go under it; `down` removes it, so it must be ours.
	[[ ! -e /var/lib/kubelet ]] || die "/var/lib/kubelet exists: another kubelet runs or ran here"
	# Rook's dataDirHostPath: a mon finding an earlier cluster's data there
	# never forms a quorum with this cluster's keys.
	[[ ! -e /var/lib/rook ]] || die "/var/lib/rook exists: an earlier Ceph cluster's data (remove it, or run down)"
	! ip link show "$BRIDGE" >/dev/null 2>&1 || die "bridge $BRIDGE exists: an earlier e2e cluster's (run down)"
	local left
	left=$(leftovers)
	[[ -z $left ]] || die "an earlier e2e cluster is still on this machine (run down):"$'\n'"$left"
	prepare
	mkdir -p "$STATE"/{logs,etcd}
	machine >"$STATE/machine.before"
	: >"$STATE/pids"
	for s in "${SYSCTLS[@]}"; do
		echo "$s $(sysctl -n "$s" 2>/dev/null || echo -)"
	done >"$STATE/sysctls"

	local i names="" clients=()
	for ((i = 1; i <= NODES; i++)); do
		names+=",$(node_name "$i")"
		clients+=(-client "kubelet-$(node_name "$i")=system:node:$(node_name "$i")/system:nodes")
	done
	go run ./internal/e2e/cmd/pki -dir "$STATE/pki" \
		-ip "$SERVICE_IP,$HOST_IP,127.0.0.1" \
		-name "kubernetes,kubernetes.default,kubernetes.default.svc,kubernetes.default.svc.cluster.local,localhost$names" \
		-client admin=e2e-admin/system:masters \
		-client kcm=system:kube-controller-manager \
		-client scheduler=system:kube-scheduler \
		-client proxy=system:kube-proxy \
		-client apiserver-kubelet=kube-apiserver-kubelet-client/system:masters \
		"${clients[@]}"
	for k in admin:admin kcm:kcm scheduler:scheduler; do
		kubeconfig "${k%%:*}" "${k##*:}" 127.0.0.1
	done
	# Node components reach the API server across the bridge.
	kubeconfig proxy proxy "$HOST_IP"
	for ((i = 1; i <= NODES; i++)); do
		kubeconfig "kubelet-$(node_name "$i")" "kubelet-$(node_name "$i")" "$HOST_IP"
	done

	ip link add "$BRIDGE" type bridge
	ip addr add "$HOST_IP/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	for ((i = 1; i <= NODES; i++)); do
		network "$i"
		cgroup_root "$i"
		node_config "$i"
		node_devices "$i"
	done

	start etcd "$ENVTEST/etcd" --data-dir "$STATE/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--advertise-client-urls "http://127.0.0.1:$ETCD_PORT" --listen-peer-urls http://127.0.0.1:12380 \
		--initial-advertise-peer-urls http://127.0.0.1:12380 --initial-cluster default=http://127.0.0.1:12380 \
		--unsafe-no-fsync
	start kube-apiserver "$ENVTEST/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--bind-address 0.0.0.0 --secure-port "$API_PORT" --advertise-address "$HOST_IP" \
		--client-ca-file "$STATE/pki/ca.crt" --tls-cert-file "$STATE/pki/serving.crt" --tls-private-key-file "$STATE/pki/serving.key" \
		--service-account-key-file "$STATE/pki/service-account.pub" --service-account-signing-key-file "$STATE/pki/service-account.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local --service-cluster-ip-range "$SERVICE_CIDR" \
		--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --allow-privileged=true \
		--kubelet-client-certificate "$STATE/pki/apiserver-kubelet.crt" --kubelet-client-key "$STATE/pki/apiserver-kubelet.key" \
		--kubelet-preferred-address-types InternalIP
	wait_for "kube-apiserver" 60 kctl get --raw /readyz
	start kube-controller-manager "$ENVTEST/kube-controller-manager" --kubeconfig "$STATE/kcm.kubeconfig" \
		--service-account-private-key-file "$STATE/pki/service-account.key" --root-ca-file "$STATE/pki/ca.crt" \
		--cluster-signing-cert-file "$STATE/pki/ca.crt" --cluster-signing-key-file "$STATE/pki/ca.key" \
		--use-service-account-credentials=true --leader-elect=false --secure-port=0 --service-cluster-ip-range "$SERVICE_CIDR"
	start kube-scheduler "$NODEBIN/kube-scheduler" --kubeconfig "$STATE/scheduler.kubeconfig" --leader-elect=false --secure-port=0

	# Every node's runtime holds every image, as if pulled: the scheduler
	# places Rook's daemons on any of them.
	for ((i = 1; i <= NODES; i++)); do
		start_runtime "$i"
		local sock
		sock="$(node_dir "$i")/containerd/containerd.sock"
		go run ./internal/e2e/cmd/images "${IMAGES_FLAGS[@]}" -import "$sock" >/dev/null
		ctr --address "$sock" -n k8s.io images import "$COREDNS_ARCHIVE" >/dev/null
		start_node "$i"
	done
	for ((i = 1; i <= NODES; i++)); do
		wait_for "node $(node_name "$i") Ready" 90 kctl wait --for=condition=Ready "node/$(node_name "$i")" --timeout=1s
	done

	sed -e "s|@DNS_IP@|$DNS_IP|g" -e "s|@IMAGE@|$COREDNS_IMAGE|g" hack/e2e/coredns.yaml | kctl apply -f - >/dev/null
	wait_for "CoreDNS" 90 kctl -n kube-system rollout status deployment/coredns --timeout=1s
	log "up: $NODES node(s) on $BRIDGE ($HOST_IP), admin kubeconfig $STATE/admin.kubeconfig"
	echo "$STATE/admin.kubeconfig"
}

# stop NAME: SIGTERM, then SIGKILL after 10 s, for the recorded PID; the
# record goes, so the name can be started again.
stop() {
	local pid
	[[ -e "$STATE/pids" ]] || return 0
	pid=$(awk -v n="$1" '$1 == n {print $2}' "$STATE/pids" | tail -n 1)
	[[ -n $pid ]] || return 0
	sed -i "/^$1 /d" "$STATE/pids"
	kill "$pid" 2>/dev/null || return 0
	for ((t = 0; t < 50; t++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
	kill -9 "$pid" 2>/dev/null || true
}

# stop_containers kills every task node i's containerd runs, removes them
# and stops containerd and its shims: the node's containers are gone, as on
# a machine that lost power.
stop_containers() {
	local i=$1 sock
	sock="$(node_dir "$i")/containerd/containerd.sock"
	if [[ -S $sock ]]; then
		for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
			ctr --address "$sock" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true
		done
		sleep 1
		for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
			ctr --address "$sock" -n k8s.io tasks rm -f "$id" >/dev/null 2>&1 || true
		done
	fi
	stop "containerd-$(node_name "$i")"
	pkill -f "containerd-shim-runc-v2 -namespace k8s.io -id .* -address $sock" 2>/dev/null || true
}

# stop-node: a node's outage, from the cluster's side indistinguishable
# from a machine that went away: its kubelet and kube-proxy stop, every
# container it ran is killed, its runtime stops.
stop_node() {
	local i
	i=$(node_index "$1")
	ENVTEST="$CACHE_ROOT/envtest/k8s-v1.37.2-etcd-v3.7.3"
	stop "kubelet-$1"
	stop "kube-proxy-$1"
	stop_containers "$i"
	log "node $1 is down: kubelet, kube-proxy, containerd and every container stopped"
}

# start-node: the node back; the kubelet finds its pods' sandboxes gone and
# starts them again.
start_node_again() {
	local i
	i=$(node_index "$1")
	ENVTEST="$CACHE_ROOT/envtest/k8s-v1.37.2-etcd-v3.7.3"
	NODEBIN=$(hack/e2e/node-binaries.sh)
	start_runtime "$i"
	start_node "$i"
	wait_for "node $1 Ready" 120 kctl wait --for=condition=Ready "node/$1" --timeout=1s
	log "node $1 is back"
}

# node_cgroups lists the cgroups the nodes' kubelets and containerds made
# (each node's cgroup root, e2e-node-X, in every hierarchy), whether or not
# $STATE still records the nodes.
node_cgroups() {
	find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d -name 'e2e-node-*' 2>/dev/null
}

# cgroup_processes lists the PIDs left in the nodes' cgroups: containers
# whose runtime died before it could stop them.
cgroup_processes() {
	local cgroups
	mapfile -t cgroups < <(node_cgroups)
	((${#cgroups[@]})) || return 0
	find "${cgroups[@]}" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un
}

# leftovers lists what of an e2e cluster is still on the machine, read from
# the machine rather than from $STATE (which a broken run may have lost):
# processes with the state folder in their arguments (every daemon up
# starts, and containerd's shims), processes in the nodes' cgroups, those
# cgroups, the nodes' namespaces, the bridge, and mounts.
leftovers() {
	pgrep -a -f -- "$STATE/" | sed 's/^/process /'
	cgroup_processes | sed 's/^/process in a node cgroup /'
	node_cgroups | sed 's/^/cgroup /'
	ip netns list 2>/dev/null | awk '$1 ~ /^e2e-node-/ {print "namespace " $1}'
	ip link show "$BRIDGE" >/dev/null 2>&1 && echo "link $BRIDGE"
	awk -v s="$STATE" '$2 ~ "^"s"/" || $2 ~ "^/var/lib/kubelet" {print "mount " $2}' /proc/mounts
}

# kill_leftovers ends what the orderly stops missed: daemons not in the
# PID record (SIGTERM, SIGKILL after 10 s), then every process still in
# the nodes' cgroups (SIGKILL: their runtime is gone, no one would stop
# them otherwise), until the cgroups are empty.
kill_leftovers() {
	local t pids
	pkill -f -- "$STATE/" 2>/dev/null
	for ((t = 0; t < 50; t++)); do pgrep -f -- "$STATE/" >/dev/null || break; sleep 0.2; done
	pkill -9 -f -- "$STATE/" 2>/dev/null
	for ((t = 0; t < 50; t++)); do
		pids=$(cgroup_processes)
		[[ -n $pids ]] || return 0
		# shellcheck disable=SC2086 # one PID a word
		kill -9 $pids 2>/dev/null
		sleep 0.2
	done
}

down() {
	local recorded=true
	[[ -e "$STATE/pids" ]] || recorded=false
	if ! $recorded && [[ -z $(leftovers) ]]; then
		log "nothing is up ($STATE/pids is absent and nothing of a cluster is left)"
		return 0
	fi
	# Best effort from here on: one step that finds nothing to undo must not
	# stop the others.
	set +e +o pipefail
	ENVTEST="$CACHE_ROOT/envtest/k8s-v1.37.2-etcd-v3.7.3"
	local before=""
	if [[ -e "$STATE/machine.before" ]]; then
		before=$(mktemp)
		cp "$STATE/machine.before" "$before"
	fi
	# Pods first, so that the kubelets run CNI DEL and unmount their volumes.
	if kctl get --raw /readyz >/dev/null 2>&1; then
		kctl delete namespace --all --wait=false >/dev/null 2>&1 || true
		kctl delete pods --all -A --grace-period=5 --timeout=60s >/dev/null 2>&1 || true
	fi
	# Every node that has a folder, whatever the count recorded.
	local i nodes=()
	for ((i = 1; i <= ${#LETTERS[@]}; i++)); do
		[[ -d $(node_dir "$i") ]] && nodes+=("$i")
	done
	if $recorded; then
		for i in "${nodes[@]}"; do
			stop "kube-proxy-$(node_name "$i")"
			stop "kubelet-$(node_name "$i")"
		done
		stop kube-scheduler
		stop kube-controller-manager
	fi
	for i in "${nodes[@]}"; do stop_containers "$i"; done
	if $recorded; then
		stop kube-apiserver
		stop etcd
	fi
	kill_leftovers
	# Mounts left by pods and snapshots, deepest first; the nodes' mount
	# namespaces (their files under $STATE) and /dev folders with them.
	awk -v s="$STATE" '$2 ~ "^"s || $2 ~ "^/var/lib/kubelet" || $2 ~ "^/run/netns/cni-" {print $2}' /proc/mounts |
		sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	rm -f /run/netns/cni-* 2>/dev/null
	for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do ip netns delete "$ns" 2>/dev/null || true; done
	# A node's namespace takes its cni0, veths, routes and iptables with it.
	for ns in $(ip netns list 2>/dev/null | awk '/^e2e-node-/ {print $1}'); do ip netns delete "$ns" 2>/dev/null || true; done
	ip link delete "$BRIDGE" 2>/dev/null || true
	# `ip netns add` mounts /run/netns onto itself the first time.
	[[ -n $before ]] && ! grep -qx /run/netns "$before" && umount /run/netns 2>/dev/null
	# The cgroups the kubelets and containerds made, deepest first; k8s.io
	# only when up recorded that it was not there before.
	local c
	for c in $(node_cgroups); do find "$c" -depth -type d -exec rmdir {} + 2>/dev/null; done
	if [[ -n $before ]]; then
		for c in /sys/fs/cgroup/*/k8s.io; do
			[[ -d $c ]] && ! grep -qx "$c" "$before" && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
		done
	fi
	[[ -e "$STATE/sysctls" ]] && while read -r key value; do
		[[ $value == - ]] || sysctl -q -w "$key=$value" >/dev/null 2>&1 || true
	done <"$STATE/sysctls"
	# The kubelets' links to their containers' logs (a fixed folder).
	find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete 2>/dev/null
	if [[ -n $before ]]; then
		grep -qx /var/log/containers "$before" || rmdir /var/log/containers 2>/dev/null
		grep -qx /var/log/pods "$before" || rmdir /var/log/pods 2>/dev/null
	fi
	# What is still there keeps $STATE (its PID record and the machine as
	# it was), so that another down can finish the job.
	local left
	left=$(leftovers)
	if [[ -n $left ]]; then
		log "down: left on the machine (kept $STATE for another down):"
		echo "$left" >&2
		rm -f "$before"
		return 1
	fi
	rm -rf "$STATE" /var/lib/kubelet /var/lib/rook
	if [[ -z $before ]]; then
		log "down: nothing of the cluster is left (no record of the machine before up to compare with)"
		return 0
	fi
	local changed
	changed=$(diff "$before" <(machine))
	rm -f "$before"
	if [[ -n $changed ]]; then
		log "down: the machine differs from before up:"
		echo "$changed" >&2
		return 1
	fi
	log "down: every process stopped, the machine as it was before up (links, addresses, routes, namespaces, iptables, mounts, cgroups, sysctls)"
}

case "${1:-}" in
prepare) prepare ;;
up) up ;;
down) down ;;
stop-node) stop_node "${2:?node name}" ;;
start-node) start_node_again "${2:?node name}" ;;
*) die "usage: $0 prepare|up|down|stop-node NAME|start-node NAME" ;;
esac
