#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine: etcd, kube-apiserver
# (Node and RBAC authorization), kube-controller-manager, kube-scheduler,
# containerd, a kubelet, kube-proxy and CoreDNS, with locally built images.
#
#	hack/e2e/cluster.sh up      # bring it up; prints the admin kubeconfig
#	hack/e2e/cluster.sh down    # stop everything, restore what it changed
#
# Everything it runs is a child process recorded by PID in $E2E_STATE/pids;
# everything it changes on the machine (sysctls, iptables, the CNI bridge,
# cgroups, mounts) is undone by `down`. The facts it relies on are in
# ../shared/spec/real-node.md's measurements: cgroup v1, no CAP_SYS_RESOURCE
# (restrict_oom_score_adj), no systemd, no registry.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=containerd.sh
source hack/e2e/containerd.sh
STATE="${E2E_STATE:-/tmp/ceph-rook-e2e}"
CACHE_ROOT="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
SERVICE_CIDR=10.96.0.0/16
SERVICE_IP=10.96.0.1
DNS_IP=10.96.0.10
POD_CIDR=10.244.0.0/24
ETCD_PORT=12379
API_PORT=6443
COREDNS_IMAGE=registry.k8s.io/coredns/coredns:v1.15.0
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables)

log() { echo "e2e/cluster: $*" >&2; }
die() { log "$*"; exit 1; }

node_ip() { ip -4 route get 1.1.1.1 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "src") print $(i + 1)}'; }
node_name() { hostname | tr '[:upper:]_' '[:lower:]-'; }

kubeconfig() { # name user-file
	cat >"$STATE/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$STATE/pki/ca.crt"}
users:
- name: $1
  user: {client-certificate: "$STATE/pki/$2.crt", client-key: "$STATE/pki/$2.key"}
contexts:
- name: e2e
  context: {cluster: e2e, user: $1}
current-context: e2e
EOF
}

# start NAME CMD...: runs CMD in the background with its log in $STATE/logs
# and records its PID.
start() {
	local name=$1
	shift
	"$@" >"$STATE/logs/$name.log" 2>&1 &
	echo "$name $!" >>"$STATE/pids"
}

wait_for() { # what seconds command...
	local what=$1 seconds=$2
	shift 2
	for ((i = 0; i < seconds * 5; i++)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.2
	done
	die "$what: not ready after ${seconds}s (logs in $STATE/logs)"
}

kctl() { "$ENVTEST/kubectl" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }

up() {
	[[ -e "$STATE/pids" ]] && die "$STATE/pids exists: a cluster is up (run down first)"
	[[ $(id -u) == 0 ]] || die "needs root (kubelet, containerd, iptables)"
	# One kubelet a machine; `down` removes this folder, so it must be ours.
	[[ ! -e /var/lib/kubelet ]] || die "/var/lib/kubelet exists: another kubelet runs or ran here"
	# Rook's dataDirHostPath: a mon finding an earlier cluster's data there
	# never forms a quorum with this cluster's keys.
	[[ ! -e /var/lib/rook ]] || die "/var/lib/rook exists: an earlier Ceph cluster's data (remove it, or run down)"
	local pkgs=()
	for bin in containerd:containerd runc:runc iptables:iptables conntrack:conntrack mmdebstrap:mmdebstrap losetup:mount; do
		command -v "${bin%%:*}" >/dev/null || pkgs+=("${bin##*:}")
	done
	[[ -x /usr/lib/cni/bridge ]] || pkgs+=(containernetworking-plugins)
	if ((${#pkgs[@]})); then
		log "installing ${pkgs[*]} from Debian"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
	fi
	ENVTEST=$(hack/envtest/build.sh)
	NODEBIN=$(hack/e2e/node-binaries.sh)
	local ip name
	ip=$(node_ip)
	name=$(node_name)
	[[ -n $ip ]] || die "no IPv4 route: cannot find the node's address"
	mkdir -p "$STATE"/{logs,etcd,containerd/root,containerd/state,containerd/opt,cni,kubelet}
	: >"$STATE/pids"
	for s in "${SYSCTLS[@]}"; do
		echo "$s $(sysctl -n "$s" 2>/dev/null || echo -)"
	done >"$STATE/sysctls"
	for c in /sys/fs/cgroup/*/; do
		[[ -d ${c}k8s.io || -d ${c}kubepods ]] || echo "$c"
	done >"$STATE/cgroup-roots"

	go run ./internal/e2e/cmd/pki -dir "$STATE/pki" \
		-ip "$SERVICE_IP,$ip,127.0.0.1" \
		-name "kubernetes,kubernetes.default,kubernetes.default.svc,kubernetes.default.svc.cluster.local,localhost,$name" \
		-client admin=e2e-admin/system:masters \
		-client kcm=system:kube-controller-manager \
		-client scheduler=system:kube-scheduler \
		-client kubelet="system:node:$name/system:nodes" \
		-client proxy=system:kube-proxy \
		-client apiserver-kubelet=kube-apiserver-kubelet-client/system:masters
	for k in admin:admin kcm:kcm scheduler:scheduler kubelet:kubelet proxy:proxy; do
		kubeconfig "${k%%:*}" "${k##*:}"
	done

	start etcd "$ENVTEST/etcd" --data-dir "$STATE/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--advertise-client-urls "http://127.0.0.1:$ETCD_PORT" --listen-peer-urls http://127.0.0.1:12380 \
		--initial-advertise-peer-urls http://127.0.0.1:12380 --initial-cluster default=http://127.0.0.1:12380 \
		--unsafe-no-fsync
	start kube-apiserver "$ENVTEST/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--bind-address 0.0.0.0 --secure-port "$API_PORT" --advertise-address "$ip" \
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

	# CNI before containerd: containerd 1.6 misses a config written later.
	cat >"$STATE/cni/10-e2e.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "e2e", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$STATE/cni/ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}},
  {"type": "loopback"}
]}
EOF
	local sock="$STATE/containerd/containerd.sock"
	containerd_config "$STATE/containerd" "$STATE/cni" >"$STATE/containerd/config.toml"
	start containerd containerd --config "$STATE/containerd/config.toml"
	wait_for containerd 30 ctr --address "$sock" version
	go run ./internal/e2e/cmd/images -import "$sock" >/dev/null
	local coredns
	coredns=$(go run ./internal/e2e/cmd/binimage -name "$COREDNS_IMAGE" -entrypoint /coredns \
		-file "$NODEBIN/coredns:/coredns:0755")
	ctr --address "$sock" -n k8s.io images import "$coredns" >/dev/null

	cat >"$STATE/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$STATE/pki/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: "unix://$sock"
clusterDNS: ["$DNS_IP"]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
# The disk is shared with everything else on the machine: never evict or
# garbage-collect images because of it.
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
serializeImagePulls: false
EOF
	start kubelet "$NODEBIN/kubelet" --config "$STATE/kubelet/config.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
		--node-ip "$ip" --hostname-override "$name" --cert-dir "$STATE/kubelet/pki"
	start kube-proxy "$NODEBIN/kube-proxy" --kubeconfig "$STATE/proxy.kubeconfig" --proxy-mode iptables \
		--conntrack-max-per-core 0 --cluster-cidr "$POD_CIDR" --hostname-override "$name"
	wait_for "node $name Ready" 90 kctl wait --for=condition=Ready "node/$name" --timeout=1s

	sed -e "s|@DNS_IP@|$DNS_IP|g" -e "s|@IMAGE@|$COREDNS_IMAGE|g" hack/e2e/coredns.yaml | kctl apply -f - >/dev/null
	wait_for "CoreDNS" 90 kctl -n kube-system rollout status deployment/coredns --timeout=1s
	log "up: node $name ($ip), admin kubeconfig $STATE/admin.kubeconfig"
	echo "$STATE/admin.kubeconfig"
}

# stop NAME: SIGTERM, then SIGKILL after 10 s, for the recorded PID.
stop() {
	local pid
	pid=$(awk -v n="$1" '$1 == n {print $2}' "$STATE/pids")
	[[ -n $pid ]] || return 0
	kill "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
	kill -9 "$pid" 2>/dev/null || true
}

down() {
	[[ -e "$STATE/pids" ]] || { log "nothing is up ($STATE/pids is absent)"; return 0; }
	# Best effort from here on: one step that finds nothing to undo must not
	# stop the others.
	set +e +o pipefail
	ENVTEST="$CACHE_ROOT/envtest/k8s-v1.37.2-etcd-v3.7.3"
	# Pods first, so that the kubelet runs CNI DEL and unmounts their volumes.
	if kctl get --raw /readyz >/dev/null 2>&1; then
		kctl delete namespace --all --wait=false >/dev/null 2>&1 || true
		kctl delete pods --all -A --grace-period=5 --timeout=60s >/dev/null 2>&1 || true
	fi
	for p in kube-proxy kubelet kube-scheduler kube-controller-manager; do stop "$p"; done
	local sock="$STATE/containerd/containerd.sock"
	if [[ -S $sock ]]; then
		for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
			ctr --address "$sock" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true
		done
		sleep 1
		for id in $(ctr --address "$sock" -n k8s.io containers ls -q 2>/dev/null); do
			ctr --address "$sock" -n k8s.io tasks rm -f "$id" >/dev/null 2>&1 || true
		done
	fi
	stop containerd
	pkill -f "containerd-shim-runc-v2 -namespace k8s.io -id .* -address $sock" 2>/dev/null || true
	stop kube-apiserver
	stop etcd
	# Mounts left by pods and snapshots, deepest first.
	awk -v s="$STATE" '$2 ~ "^"s || $2 ~ "^/var/lib/kubelet" || $2 ~ "^/run/netns/cni-" {print $2}' /proc/mounts |
		sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do ip netns delete "$ns" 2>/dev/null || true; done
	ip link delete cni0 2>/dev/null || true
	for table in filter nat mangle; do
		iptables-save -t "$table" 2>/dev/null | awk '/^:(KUBE|CNI)-/ {print substr($1, 2)}' >"$STATE/chains.$table" || true
		iptables -t "$table" -S 2>/dev/null | grep -E -- '-j (KUBE|CNI)-' | sed 's/^-A/-D/' | while read -r rule; do
			eval iptables -t "$table" "$rule" 2>/dev/null || true
		done
		while read -r chain; do iptables -t "$table" -F "$chain" 2>/dev/null || true; done <"$STATE/chains.$table"
		while read -r chain; do iptables -t "$table" -X "$chain" 2>/dev/null || true; done <"$STATE/chains.$table"
	done
	iptables -t nat -S POSTROUTING 2>/dev/null | grep -- "$POD_CIDR" | sed 's/^-A/-D/' | while read -r rule; do
		eval iptables -t nat "$rule" 2>/dev/null || true
	done
	# The cgroups the kubelet and containerd made (kubepods, k8s.io), deepest first.
	while read -r root; do
		for top in kubepods k8s.io; do
			[[ -d $root$top ]] && find "$root$top" -depth -type d -exec rmdir {} + 2>/dev/null || true
		done
	done <"$STATE/cgroup-roots"
	while read -r key value; do
		[[ $value == - ]] || sysctl -q -w "$key=$value" >/dev/null 2>&1 || true
	done <"$STATE/sysctls"
	rm -rf "$STATE" /var/lib/kubelet /var/lib/rook
	log "down: every process stopped, the machine restored"
}

case "${1:-}" in
up) up ;;
down) down ;;
*) die "usage: $0 up|down" ;;
esac
