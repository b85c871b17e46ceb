# Sourced by cluster.sh and verify-images.sh: the containerd configuration
# both run, root, state, socket and CNI configuration under one folder.
#
#	containerd_config DIR CNI_DIR >DIR/config.toml
containerd_config() {
	local dir=$1 cni=$2
	cat <<EOT
version = 2
root = "$dir/root"
state = "$dir/state"
oom_score = 0

[grpc]
  address = "$dir/containerd.sock"

[ttrpc]
  address = "$dir/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  # No CAP_SYS_RESOURCE on these machines: every sandbox fails without it.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$cni"
EOT
}
