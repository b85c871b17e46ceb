package localrun

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// simulatorAPI lets a user change the simulated hardware while `just run`
// runs:
//
//	GET    /nodes                         the nodes and their devices
//	POST   /nodes/{node}                  add a node (with a few devices)
//	DELETE /nodes/{node}                  remove a node (its ConfigMap goes)
//	POST   /nodes/{node}/disks?type=ssd   add a disk (hdd, ssd, nvme, inuse)
//	DELETE /nodes/{node}/disks/{device}   pull a disk (by kernel name)
func simulatorAPI(d *simulate.Discovery) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nodes", func(w http.ResponseWriter, r *http.Request) {
		nodes := d.Nodes()
		names := make([]string, 0, len(nodes))
		for n := range nodes {
			names = append(names, n)
		}
		sort.Strings(names)
		out := make([]map[string]any, 0, len(names))
		for _, n := range names {
			var devices []string
			for _, dev := range nodes[n] {
				devices = append(devices, dev.Name)
			}
			out = append(out, map[string]any{"node": n, "devices": devices})
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /nodes/{node}", func(w http.ResponseWriter, r *http.Request) {
		node := r.PathValue("node")
		if _, exists := d.Nodes()[node]; exists {
			writeJSON(w, http.StatusConflict, map[string]string{"error": fmt.Sprintf("node %s already exists", node)})
			return
		}
		respond(w, d.SetNode(r.Context(), node, simulate.MixedDevices(node, 4)))
	})
	mux.HandleFunc("DELETE /nodes/{node}", func(w http.ResponseWriter, r *http.Request) {
		respond(w, d.RemoveNode(r.Context(), r.PathValue("node")))
	})
	mux.HandleFunc("POST /nodes/{node}/disks", func(w http.ResponseWriter, r *http.Request) {
		kind, ok := map[string]simulate.Kind{"": simulate.HDD, "hdd": simulate.HDD, "ssd": simulate.SSD, "nvme": simulate.NVMe, "inuse": simulate.InUse}[r.URL.Query().Get("type")]
		if !ok {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "type must be hdd, ssd, nvme or inuse"})
			return
		}
		dev, err := d.AddDevice(r.Context(), r.PathValue("node"), kind)
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusCreated, map[string]string{"device": dev.Name})
	})
	mux.HandleFunc("DELETE /nodes/{node}/disks/{device}", func(w http.ResponseWriter, r *http.Request) {
		if err := d.RemoveDevice(r.Context(), r.PathValue("node"), r.PathValue("device")); err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

func respond(w http.ResponseWriter, err error) {
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
