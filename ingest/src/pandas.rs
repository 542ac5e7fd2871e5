//! Pandas metadata for the Parquet files cellsim writes (ingested tables and run outputs).
//!
//! `pandas.read_parquet` turns a nullable integer column into `float64` (NaN for null), which
//! rounds the 64-bit IDs that `--multiply` derives (above 2^53) and makes integer codes floats; a
//! nullable boolean column becomes Python objects. A schema's `pandas` metadata key, in pandas'
//! own format (which pyarrow reads back), names those columns' nullable pandas dtypes (`UInt64`,
//! `Int64`, `UInt8`, `boolean`, ...), so pandas keeps them exact and joins on IDs match. Columns
//! it does not list get pyarrow's default conversion; polars, DuckDB and Arrow ignore the key.
//!
//! Invariant: a schema without nullable integer or boolean columns is returned unchanged.

use std::collections::HashMap;

use arrow_schema::{DataType, Schema};

/// The schema metadata key pandas reads.
pub const PANDAS_KEY: &str = "pandas";

/// The pandas nullable dtype and pandas type name of an Arrow type, for the types pandas would
/// otherwise widen when nulls are present.
fn nullable_dtype(data_type: &DataType) -> Option<(&'static str, &'static str)> {
    Some(match data_type {
        DataType::Int8 => ("Int8", "int8"),
        DataType::Int16 => ("Int16", "int16"),
        DataType::Int32 => ("Int32", "int32"),
        DataType::Int64 => ("Int64", "int64"),
        DataType::UInt8 => ("UInt8", "uint8"),
        DataType::UInt16 => ("UInt16", "uint16"),
        DataType::UInt32 => ("UInt32", "uint32"),
        DataType::UInt64 => ("UInt64", "uint64"),
        DataType::Boolean => ("boolean", "bool"),
        _ => return None,
    })
}

/// `schema` with a `pandas` metadata entry that gives its nullable integer and boolean columns
/// pandas' nullable dtypes (see the module doc).
pub fn with_pandas_metadata(schema: Schema) -> Schema {
    let columns: Vec<serde_json::Value> = schema
        .fields()
        .iter()
        .filter(|f| f.is_nullable())
        .filter_map(|f| {
            let (numpy_type, pandas_type) = nullable_dtype(f.data_type())?;
            Some(serde_json::json!({
                "name": f.name(),
                "field_name": f.name(),
                "pandas_type": pandas_type,
                "numpy_type": numpy_type,
                "metadata": null,
            }))
        })
        .collect();
    if columns.is_empty() {
        return schema;
    }
    let pandas = serde_json::json!({
        "index_columns": [],
        "column_indexes": [],
        "columns": columns,
        "creator": {"library": "cellsim", "version": env!("CARGO_PKG_VERSION")},
    });
    let mut metadata = schema.metadata().clone();
    metadata.insert(PANDAS_KEY.to_string(), pandas.to_string());
    schema.with_metadata(metadata)
}

/// The pandas dtypes a schema's `pandas` metadata names, by column (empty without the key).
pub fn pandas_dtypes(schema: &Schema) -> HashMap<String, String> {
    let Some(text) = schema.metadata().get(PANDAS_KEY) else {
        return HashMap::new();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return HashMap::new();
    };
    let columns = value["columns"].as_array().cloned().unwrap_or_default();
    columns
        .iter()
        .filter_map(|c| Some((c["name"].as_str()?.into(), c["numpy_type"].as_str()?.into())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::Field;

    #[test]
    fn nullable_integers_and_booleans_are_named_and_nothing_else() {
        let schema = Schema::new(vec![
            Field::new("time_us", DataType::Int64, false),
            Field::new("machine_id", DataType::UInt64, true),
            Field::new("code", DataType::UInt8, true),
            Field::new("flag", DataType::Boolean, true),
            Field::new("cpu", DataType::Float32, true),
            Field::new("name", DataType::Utf8, true),
        ]);
        let dtypes = pandas_dtypes(&with_pandas_metadata(schema));
        let expected: HashMap<String, String> = [
            ("machine_id", "UInt64"),
            ("code", "UInt8"),
            ("flag", "boolean"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(dtypes, expected);
    }

    #[test]
    fn a_schema_without_nullable_integers_is_unchanged() {
        let schema = Schema::new(vec![
            Field::new("tick", DataType::UInt32, false),
            Field::new("ratio", DataType::Float64, true),
        ]);
        assert_eq!(with_pandas_metadata(schema.clone()), schema);
    }
}
