//! OpenAPI / JSON Schema descriptions of the types with hand-written serde
//! forms (feature `schema`).

use std::borrow::Cow;

use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{RefOr, schema::OneOfBuilder};
use utoipa::{PartialSchema, ToSchema};

use crate::card::{Card, CardSet};
use crate::hand::Trick;
use crate::seat::Seat;

impl PartialSchema for Card {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^([2-9TJQKA]|10)[CDHS]$"))
            .description(Some(
                "A card: rank (2-9, T, J, Q, K, A) then suit (C, D, H, S), e.g. \"AS\", \"TD\". \
                 The server writes upper case and T; it also reads lower case and 10.",
            ))
            .examples(["AS", "TD", "2C"])
            .into()
    }
}

impl ToSchema for Card {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Card")
    }
}

impl PartialSchema for CardSet {
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(Card::schema())
            .unique_items(true)
            .max_items(Some(52))
            .description(Some("A set of cards, sorted by suit (clubs, diamonds, hearts, spades) then rank."))
            .into()
    }
}

impl ToSchema for CardSet {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("CardSet")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((<Card as ToSchema>::name().into_owned(), Card::schema()));
    }
}

impl PartialSchema for Trick {
    fn schema() -> RefOr<Schema> {
        let seat_ref = || RefOr::Ref(utoipa::openapi::Ref::from_schema_name(<Seat as ToSchema>::name()));
        ObjectBuilder::new()
            .description(Some("The cards played to one trick, in play order from its leader."))
            .property("leader", seat_ref())
            .required("leader")
            .property(
                "cards",
                ArrayBuilder::new()
                    .items(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(<Card as ToSchema>::name())))
                    .max_items(Some(4)),
            )
            .required("cards")
            .property(
                "winner",
                OneOfBuilder::new()
                    .item(seat_ref())
                    .item(ObjectBuilder::new().schema_type(Type::Null))
                    .description(Some("Who took the trick, once all four cards are down.")),
            )
            .required("winner")
            .into()
    }
}

impl ToSchema for Trick {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Trick")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((<Card as ToSchema>::name().into_owned(), Card::schema()));
        schemas.push((<Seat as ToSchema>::name().into_owned(), Seat::schema()));
    }
}

/// The schema of a 32-byte value written as 64 hex digits.
fn hex32(description: &'static str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some("^[0-9a-fA-F]{64}$"))
        .description(Some(description))
        .examples(["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"])
        .into()
}

macro_rules! hex32_schema {
    ($ty:ty, $name:literal, $description:literal) => {
        impl PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                hex32($description)
            }
        }

        impl ToSchema for $ty {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
        }
    };
}

hex32_schema!(
    crate::fair::ClientSeed,
    "ClientSeed",
    "A player's seed for fair deals: 32 random bytes as 64 hex digits (the server writes lower case)."
);
hex32_schema!(
    crate::fair::ServerSeed,
    "ServerSeed",
    "The server's seed of a fair match, 32 bytes as 64 hex digits: revealed once the match is over."
);
hex32_schema!(
    crate::fair::Commitment,
    "Commitment",
    "SHA-256 of the server seed, as 64 hex digits: published before any player's seed is taken."
);
