package cassandratest

import (
	"slices"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// The system tables the double answers, computed from its schema when
// read: system.local (one node, its own tokens), system.peers and
// system.peers_v2 (no peers), system_schema.keyspaces, tables and columns
// (the user keyspaces), system_views.settings, and the other
// system_schema tables gocql's metadata refresh reads, empty.

var systemKeyspaces = []string{"system", "system_schema", "system_auth", "system_distributed",
	"system_traces", "system_views", "system_virtual_schema"}

func isSystemKeyspace(ks string) bool { return slices.Contains(systemKeyspaces, ks) }

type sysCol struct {
	name, typ string // typ: a colTypes name, or "" for the types below
	dt        datatype.DataType
}

func col(name, typ string) sysCol { return sysCol{name: name, typ: typ, dt: colTypes[typ]} }

var (
	textMap = datatype.NewMap(datatype.Varchar, datatype.Varchar)
	textSet = datatype.NewSet(datatype.Varchar)
)

func inet(name string) sysCol     { return sysCol{name: name, dt: datatype.Inet} }
func uuid(name string) sysCol     { return sysCol{name: name, dt: datatype.Uuid} }
func tokenSet(name string) sysCol { return sysCol{name: name, dt: textSet} }

// sysView is one system table: its columns (nil: an empty table that
// takes any column name, typed text) and its rows, by column name.
type sysView struct {
	ks, name string
	cols     []sysCol
	rows     func(s *Server) []map[string][]byte
}

var sysViews = map[string]*sysView{}

func init() {
	for _, v := range []*sysView{
		{ks: "system", name: "local", cols: []sysCol{col("key", "text"), col("bootstrapped", "text"), inet("broadcast_address"),
			col("cluster_name", "text"), col("cql_version", "text"), col("data_center", "text"), uuid("host_id"),
			inet("listen_address"), col("native_port", "int"), col("native_protocol_version", "text"), col("partitioner", "text"),
			col("rack", "text"), col("release_version", "text"), inet("rpc_address"), col("rpc_port", "int"),
			uuid("schema_version"), tokenSet("tokens")}, rows: localRows},
		{ks: "system", name: "peers", cols: []sysCol{inet("peer"), col("data_center", "text"), uuid("host_id"), inet("preferred_ip"),
			col("rack", "text"), col("release_version", "text"), inet("rpc_address"), uuid("schema_version"), tokenSet("tokens")}},
		{ks: "system", name: "peers_v2", cols: []sysCol{inet("peer"), col("peer_port", "int"), col("data_center", "text"), uuid("host_id"),
			inet("native_address"), col("native_port", "int"), inet("preferred_ip"), col("preferred_port", "int"), col("rack", "text"),
			col("release_version", "text"), uuid("schema_version"), tokenSet("tokens")}},
		{ks: "system_schema", name: "keyspaces", cols: []sysCol{col("keyspace_name", "text"), col("durable_writes", "boolean"),
			{name: "replication", dt: textMap}}, rows: keyspaceRows},
		{ks: "system_schema", name: "tables", cols: []sysCol{col("keyspace_name", "text"), col("table_name", "text"),
			col("default_time_to_live", "int"), col("gc_grace_seconds", "int")}, rows: tableRows},
		{ks: "system_schema", name: "columns", cols: []sysCol{col("keyspace_name", "text"), col("table_name", "text"),
			col("column_name", "text"), col("clustering_order", "text"), col("kind", "text"), col("position", "int"), col("type", "text")},
			rows: columnRows},
		{ks: "system_views", name: "settings", cols: []sysCol{col("name", "text"), col("value", "text")}, rows: settingRows},
		{ks: "system_schema", name: "views"}, {ks: "system_schema", name: "functions"}, {ks: "system_schema", name: "aggregates"},
		{ks: "system_schema", name: "types"}, {ks: "system_schema", name: "indexes"}, {ks: "system_schema", name: "triggers"},
		{ks: "system_schema", name: "dropped_columns"},
	} {
		sysViews[v.ks+"."+v.name] = v
	}
}

// releaseVersion is the Cassandra version system.local reports.
const releaseVersion = "4.0.11"

// schemaVersion is the one schema version of the one node.
var schemaVersion = []byte{0x5c, 0x2f, 0x2d, 0x64, 0x1d, 0x28, 0x3b, 0x5e, 0x9a, 0x43, 0x1e, 0x3c, 0x51, 0x80, 0x10, 0x6a}

func localRows(s *Server) []map[string][]byte {
	ip := []byte{127, 0, 0, 1}
	return []map[string][]byte{{
		"key": []byte("local"), "bootstrapped": []byte("COMPLETED"), "broadcast_address": ip, "cluster_name": []byte("cassandratest"),
		"cql_version": []byte("3.4.5"), "data_center": []byte(dataCenter), "host_id": s.hostID[:], "listen_address": ip,
		"native_port": put32(uint32(s.port)), "native_protocol_version": []byte("5"),
		"partitioner": []byte("org.apache.cassandra.dht.Murmur3Partitioner"), "rack": []byte("rack1"),
		"release_version": []byte(releaseVersion), "rpc_address": ip, "rpc_port": put32(uint32(s.port)),
		"schema_version": schemaVersion, "tokens": encodeCollection([]string{"-9223372036854775808"}, nil),
	}}
}

func keyspaceRows(s *Server) []map[string][]byte {
	var out []map[string][]byte
	for _, k := range s.keyspaces {
		var keys, vals []string
		for _, o := range slicesSorted(k.replication) {
			keys, vals = append(keys, o), append(vals, k.replication[o])
		}
		out = append(out, map[string][]byte{"keyspace_name": []byte(k.name), "durable_writes": {1}, "replication": encodeCollection(keys, vals)})
	}
	return out
}

func tableRows(s *Server) []map[string][]byte {
	var out []map[string][]byte
	for _, k := range s.keyspaces {
		for _, t := range k.tables {
			out = append(out, map[string][]byte{"keyspace_name": []byte(k.name), "table_name": []byte(t.name),
				"default_time_to_live": put32(0), "gc_grace_seconds": put32(864000)})
		}
	}
	return out
}

// columnRows are Cassandra 4.0's system_schema.columns rows: key columns
// at their position, regular ones at -1; clustering order asc for a
// clustering column, none otherwise.
func columnRows(s *Server) []map[string][]byte {
	var out []map[string][]byte
	for _, k := range s.keyspaces {
		for _, t := range k.tables {
			for _, c := range t.cols {
				order := "none"
				if c.kind == "clustering" {
					order = "asc"
				}
				out = append(out, map[string][]byte{"keyspace_name": []byte(k.name), "table_name": []byte(t.name),
					"column_name": []byte(c.name), "clustering_order": []byte(order), "kind": []byte(c.kind),
					"position": put32(uint32(int32(c.pos))), "type": []byte(c.typ)})
			}
		}
	}
	return out
}

func settingRows(*Server) []map[string][]byte {
	var out []map[string][]byte
	for _, kv := range [][2]string{{"commitlog_sync", "periodic"}, {"batch_size_fail_threshold_in_kb", "50"}, {"cluster_name", "cassandratest"}} {
		out = append(out, map[string][]byte{"name": []byte(kv[0]), "value": []byte(kv[1])})
	}
	return out
}

func slicesSorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// encodeCollection serialises a set<text> (vals nil) or map<text, text>
// value (protocol v3 and later: 32-bit counts and lengths).
func encodeCollection(keys, vals []string) []byte {
	out := put32(uint32(len(keys)))
	for i, k := range keys {
		out = append(append(out, put32(uint32(len(k)))...), k...)
		if vals != nil {
			out = append(append(out, put32(uint32(len(vals[i])))...), vals[i]...)
		}
	}
	return out
}

func (v *sysView) col(name string) (sysCol, bool) {
	if v.cols == nil {
		return col(name, "text"), true
	}
	i := slices.IndexFunc(v.cols, func(c sysCol) bool { return c.name == name })
	if i < 0 {
		return sysCol{}, false
	}
	return v.cols[i], true
}

func (s *Server) prepareSystemSelect(p *prepared, st selectStmt, ks string) message.Error {
	v := sysViews[ks+"."+st.table.name]
	if v == nil {
		return invalid("unconfigured table %s", st.table.name)
	}
	p.sys = v
	meta := func(c sysCol) *message.ColumnMetadata {
		return &message.ColumnMetadata{Keyspace: v.ks, Table: v.name, Name: c.name, Type: c.dt}
	}
	if st.star {
		for _, c := range v.cols {
			p.result = append(p.result, meta(c))
		}
	}
	for _, sel := range st.sel {
		c, ok := v.col(sel.col)
		if !ok {
			return invalid("Undefined column name %s", sel.col)
		}
		if sel.fn != "" {
			return invalid("the test double does not support %s on system tables", sel.fn)
		}
		p.result = append(p.result, meta(c))
	}
	for _, r := range st.where {
		c, ok := v.col(r.col)
		if !ok {
			return invalid("Undefined column name %s", r.col)
		}
		if r.op != "=" || c.typ == "" {
			return invalid("the test double restricts system tables by = on text and int columns only")
		}
		if r.t.marker >= 0 {
			p.vars[r.t.marker] = meta(c)
		} else if _, err := literal(r.t.lit, c.name, c.typ); err != nil {
			return err
		}
	}
	if st.limit != nil && st.limit.marker >= 0 {
		p.vars[st.limit.marker] = &message.ColumnMetadata{Keyspace: v.ks, Table: v.name, Name: "[limit]", Type: datatype.Int}
	}
	return nil
}

// readSystem answers a SELECT of a system table, in one page.
func (s *Server) readSystem(p *prepared, b binding, cl primitive.ConsistencyLevel) message.Message {
	if cl == primitive.ConsistencyLevelAny {
		return invalid("ANY ConsistencyLevel is only supported for writes")
	}
	st := p.stmt.(selectStmt)
	want := map[string][]byte{}
	for _, r := range st.where {
		c, _ := p.sys.col(r.col)
		v, err := b.key(&column{name: c.name, typ: c.typ}, r.t)
		if err != nil {
			return err
		}
		want[c.name] = v
	}
	res := &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: int32(len(p.result)), Columns: p.result}, Data: message.RowSet{}}
	if p.sys.rows == nil {
		return res
	}
	s.mu.Lock()
	rows := p.sys.rows(s)
	s.mu.Unlock()
	slices.SortFunc(rows, func(a, b map[string][]byte) int {
		for _, c := range []string{"keyspace_name", "table_name", "column_name", "name"} {
			if d := strings.Compare(string(a[c]), string(b[c])); d != 0 {
				return d
			}
		}
		return 0
	})
rows:
	for _, r := range rows {
		for c, v := range want {
			if string(r[c]) != string(v) {
				continue rows
			}
		}
		var out message.Row
		for _, c := range p.result {
			out = append(out, r[c.Name])
		}
		res.Data = append(res.Data, out)
	}
	return res
}
