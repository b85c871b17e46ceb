package main

import (
	"context"
	"fmt"
	"time"
)

// file makes a real CephFS from a FileStorage: its pools sized as the
// status says, one active MDS with a standby (activeStandby), and a CSI
// StorageClass whose provisioner and Secrets exist.
func (r *run) file() error {
	fs, err := r.createReady("FileStorage", map[string]any{}, 10*time.Minute)
	if err != nil {
		return err
	}
	if err := r.checkPools(fs, "cephfs-e2e-metadata", "cephfs-e2e-data"); err != nil {
		return err
	}
	// Rook starts the daemons before Ceph has assigned them ranks.
	if err := r.until(5*time.Minute, func(ctx context.Context) error {
		active, standby, err := r.metadataServers(ctx, "cephfs-e2e")
		if err != nil {
			return err
		}
		if len(active) != 1 || len(standby) != 1 {
			return fmt.Errorf("filesystem cephfs-e2e: MDS active %v, standby %v; want one of each", active, standby)
		}
		r.step("filesystem cephfs-e2e: MDS %s active, %s standby", active[0], standby[0])
		return nil
	}); err != nil {
		return err
	}
	return r.checkStorageClass(fs, "rook-ceph.cephfs.csi.ceph.com")
}

// metadataServers are the filesystem's MDS daemons by state, as the MDS
// map says: up:active, and up:standby-replay (following this filesystem's
// journal) or up:standby (in the pool every filesystem may take from).
func (r *run) metadataServers(ctx context.Context, fsName string) (active, standby []string, err error) {
	var dump struct {
		Filesystems []struct {
			MDSMap struct {
				Name string `json:"fs_name"`
				Info map[string]struct {
					Name  string `json:"name"`
					State string `json:"state"`
				} `json:"info"`
			} `json:"mdsmap"`
		} `json:"filesystems"`
		Standbys []struct {
			Name string `json:"name"`
		} `json:"standbys"`
	}
	if err := r.cephJSON(ctx, &dump, "fs", "dump"); err != nil {
		return nil, nil, err
	}
	for _, fs := range dump.Filesystems {
		if fs.MDSMap.Name != fsName {
			continue
		}
		for _, mds := range fs.MDSMap.Info {
			switch mds.State {
			case "up:active":
				active = append(active, mds.Name)
			case "up:standby-replay":
				standby = append(standby, mds.Name)
			}
		}
	}
	for _, mds := range dump.Standbys {
		standby = append(standby, mds.Name)
	}
	return active, standby, nil
}
